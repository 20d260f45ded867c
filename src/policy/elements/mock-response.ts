import { HeaderCollection, ResponseModel } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { reasonPhrase } from '../message.js';
import { EMPTY, GPAO, int, str } from '../schema.js';

/**
 * Answers without calling the backend. API Management would take the body from the API definition's examples;
 * Portcullis has none at this layer, so the body is empty and only the status and content type are set.
 */
export const mockResponse = defineElement({
  name: 'mock-response',
  summary: 'Answers with a mocked response (status and content type) without calling the backend.',
  sections: ['inbound', 'outbound', 'on-error'],
  scopes: GPAO,
  attributes: {
    'status-code': int({ default: 200, min: 100, max: 599, expression: false }),
    'content-type': str({ expression: false }),
  },
  content: EMPTY,
  compile(node) {
    const status = node.literal('status-code');
    const contentType = node.literal('content-type');
    return (run) => {
      const headers = new HeaderCollection();
      if (typeof contentType === 'string' && contentType !== '') headers.set('Content-Type', contentType);
      run.context.response = new ResponseModel({
        statusCode: status,
        statusReason: reasonPhrase(status),
        headers,
        body: '',
      });
      return 'respond';
    };
  },
});
