import { defineElement } from '../element.js';
import { PolicyError } from '../runtime.js';
import { bool, elements, GPAO, int, str, text } from '../schema.js';

/** Refuses a request whose header is missing or holds none of the allowed values. */
export const checkHeader = defineElement({
  name: 'check-header',
  summary: 'Requires a request header, optionally with one of the listed values.',
  sections: ['inbound'],
  scopes: GPAO,
  attributes: {
    name: str({ required: true }),
    'failed-check-httpcode': int({ required: true, min: 100, max: 599 }),
    'failed-check-error-message': str({ required: true }),
    'ignore-case': bool({ required: true }),
  },
  content: elements({ name: 'value', content: text(true) }),
  compile(node) {
    const name = node.getter('name');
    const status = node.getter('failed-check-httpcode');
    const message = node.getter('failed-check-error-message');
    const ignoreCase = node.getter('ignore-case');
    const allowed = node.childrenNamed('value').map((v) => v.text() ?? (() => ''));
    return (run) => {
      const headerName = name(run);
      const values = run.context.request.headers.get(headerName);
      // LastError.Message is API Management's own text (predefined-errors table of "Error handling in API
      // Management policies"); failed-check-error-message is what the client's body says.
      if (values === undefined) {
        throw new PolicyError(
          'HeaderNotFound',
          `Header ${headerName} was not found in the request. Access denied.`,
          status(run),
          message(run),
        );
      }
      if (allowed.length === 0) return 'next';
      const fold = ignoreCase(run);
      const norm = (s: string) => (fold ? s.toLowerCase() : s);
      const accepted = new Set(allowed.map((v) => norm(v(run))));
      // A header sent as a comma-separated list counts each of its values.
      const sent = values.flatMap((v) => v.split(',')).map((v) => norm(v.trim()));
      if (sent.some((v) => accepted.has(v)) || values.some((v) => accepted.has(norm(v)))) return 'next';
      throw new PolicyError(
        'HeaderValueNotAllowed',
        `Header ${headerName} value of ${values.join(', ')} is not allowed. Access denied.`,
        status(run),
        message(run),
      );
    };
  },
});
