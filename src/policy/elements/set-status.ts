import { defineElement } from '../element.js';
import { reasonPhrase, responseOf } from '../message.js';
import { ALL_SECTIONS, EMPTY, GPAO, int, str } from '../schema.js';

/** Sets the status code (and reason) of the response or of the response return-response builds. */
export const setStatus = defineElement({
  name: 'set-status',
  summary: 'Sets the HTTP status code and reason.',
  sections: ALL_SECTIONS,
  scopes: GPAO,
  // The reference marks reason required, but real policies often omit it: the standard phrase is used then.
  attributes: { code: int({ required: true, min: 100, max: 599 }), reason: str() },
  content: EMPTY,
  compile(node, c) {
    const code = node.getter('code');
    const reason = node.getter('reason');
    const target = c.target === 'request' ? 'response' : c.target;
    return (run) => {
      const status = code(run);
      if (!Number.isInteger(status) || status < 100 || status > 599) {
        throw new TypeError(`set-status/@code must be between 100 and 599, got "${status}"`);
      }
      const response = responseOf(run, target);
      response.statusCode = status;
      response.statusReason = reason === undefined ? reasonPhrase(status) : reason(run);
      return 'next';
    };
  },
});
