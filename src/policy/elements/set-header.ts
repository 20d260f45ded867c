import { defineElement } from '../element.js';
import { messageOf } from '../message.js';
import { ALL_SCOPES, ALL_SECTIONS, elements, oneOf, str, text } from '../schema.js';

/** Headers API Management never lets a policy change (the transport owns them). */
const PROTECTED = new Set(['connection', 'content-length', 'keep-alive', 'transfer-encoding']);

/** Sets, appends, skips or deletes a header of the request, the response or the message being built. */
export const setHeader = defineElement({
  name: 'set-header',
  summary: 'Sets, appends, keeps or deletes an HTTP header.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    name: str({ required: true }),
    'exists-action': oneOf(['override', 'skip', 'append', 'delete'], { default: 'override' }),
  },
  content: elements({ name: 'value', content: text(true) }),
  compile(node, c) {
    const literalName = node.literal('name');
    if (typeof literalName === 'string' && PROTECTED.has(literalName.toLowerCase())) {
      c.error(node, 'attribute', `set-header/@name cannot change a transport header, got "${literalName}"`);
    }
    const name = node.getter('name');
    const action = node.getter('exists-action');
    const values = node.childrenNamed('value').map((v) => v.text() ?? (() => ''));
    const target = c.target;
    return (run) => {
      const headerName = name(run);
      if (PROTECTED.has(headerName.toLowerCase())) return 'next';
      const headers = messageOf(run, target).headers;
      switch (action(run)) {
        case 'delete':
          headers.delete(headerName);
          return 'next';
        case 'skip':
          if (headers.has(headerName)) return 'next';
          headers.set(
            headerName,
            values.map((v) => v(run)),
          );
          return 'next';
        case 'append':
          headers.append(
            headerName,
            values.map((v) => v(run)),
          );
          return 'next';
        case 'override':
          headers.set(headerName, values.length === 0 ? [''] : values.map((v) => v(run)));
          return 'next';
        default:
          throw new TypeError(`set-header/@exists-action must be override, skip, append or delete`);
      }
    };
  },
});
