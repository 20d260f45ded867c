import { defineElement } from '../element.js';
import { reasonPhrase, responseOf } from '../message.js';
import { ALL_SECTIONS, EMPTY, GPAO, int, str } from '../schema.js';

/** Sets the status code (and reason) of the response or of the response return-response builds. */
export const setStatus = defineElement({
  name: 'set-status',
  summary: 'Sets the HTTP status code and reason.',
  differences: [
    '`reason` is not on the status line the client receives. Envoy writes its own phrase for the code over ' +
      'HTTP/1.1 (`418 Unknown`, `200 OK`): it does not carry a custom reason phrase (envoyproxy/envoy#9559), and ' +
      "ext_proc's immediate responses and header mutations carry only the code; HTTP/2 has no reason phrase at all. " +
      'Policies still read the reason they set from `context.Response.StatusReason`.',
  ],
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
