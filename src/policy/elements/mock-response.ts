import { HeaderCollection, ResponseModel } from '../../expr/index.js';
import { defineElement } from '../element.js';
import { reasonPhrase } from '../message.js';
import { EMPTY, GPAO, int, str } from '../schema.js';
import { mockContent } from '../shared/mock-content.js';

/**
 * Answers without calling the backend, with the content the operation's definition declares for the status code:
 * its example, else a sample of its schema, else nothing (shared/mock-content.ts;
 * learn.microsoft.com/azure/api-management/mock-response-policy).
 */
export const mockResponse = defineElement({
  name: 'mock-response',
  summary:
    "Answers without calling the backend: the status, and the operation's declared example (or a sample of its schema) for it.",
  sections: ['inbound', 'outbound', 'on-error'],
  scopes: GPAO,
  attributes: {
    'status-code': int({ default: 200, min: 100, max: 599, expression: false }),
    'content-type': str({ expression: false }),
  },
  content: EMPTY,
  compile(node) {
    const status = node.literal('status-code');
    const named = node.literal('content-type');
    const contentType = typeof named === 'string' && named !== '' ? named : undefined;
    return (run) => {
      const content = mockContent(run.declaredResponses, status, contentType);
      const headers = new HeaderCollection();
      if (content.contentType !== undefined) headers.set('Content-Type', content.contentType);
      run.context.response = new ResponseModel({
        statusCode: status,
        statusReason: reasonPhrase(status),
        headers,
        body: content.body,
      });
      return 'respond';
    };
  },
});
