import { HeaderCollection, MessageBody, ResponseModel } from '../../expr/index.js';
import { defineElement } from '../element.js';
import type { Statement } from '../runtime.js';
import { ALL_SECTIONS, elements, GPAO, str } from '../schema.js';

/** Stops the pipeline and answers with a response built by its children (or taken from a variable). */
export const returnResponse = defineElement({
  name: 'return-response',
  summary: 'Ends the pipeline and returns a response built by set-status/set-header/set-body.',
  sections: ALL_SECTIONS,
  scopes: GPAO,
  attributes: { 'response-variable-name': str({ expression: false }) },
  content: elements(
    { name: 'set-status', max: 1, policy: true, target: 'pending-response' },
    { name: 'set-header', policy: true, target: 'pending-response' },
    { name: 'set-body', max: 1, policy: true, target: 'pending-response' },
  ),
  compile(node) {
    const variable = node.literal('response-variable-name');
    const children = node.children.map((c) => c.statement).filter((s): s is Statement => s !== undefined);
    return async (run) => {
      let response: ResponseModel;
      if (typeof variable === 'string') {
        const stored = run.context.variables.get(variable);
        if (!(stored instanceof ResponseModel)) {
          throw new TypeError(
            `return-response/@response-variable-name: variable "${variable}" holds no response`,
          );
        }
        response = new ResponseModel({
          statusCode: stored.statusCode,
          statusReason: stored.statusReason,
          headers: new HeaderCollection(stored.headers.entries()),
          body: stored.body === null ? null : new MessageBody(stored.body.bytes),
        });
      } else {
        response = new ResponseModel({
          statusCode: 200,
          statusReason: 'OK',
          headers: new HeaderCollection(),
        });
      }
      const outer = run.pendingResponse;
      run.pendingResponse = response;
      try {
        for (const child of children) await child(run);
      } finally {
        run.pendingResponse = outer;
      }
      run.context.response = response;
      return 'respond' as const;
    };
  },
});
