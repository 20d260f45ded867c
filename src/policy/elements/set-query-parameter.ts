import { defineElement } from '../element.js';
import { requestOf } from '../message.js';
import { ALL_SCOPES, elements, oneOf, str, text } from '../schema.js';

/** Sets, appends, skips or deletes a query parameter of the request forwarded to the backend. */
export const setQueryParameter = defineElement({
  name: 'set-query-parameter',
  summary: 'Sets, appends, keeps or deletes a query string parameter.',
  sections: ['inbound', 'backend'],
  scopes: ALL_SCOPES,
  attributes: {
    name: str({ required: true }),
    'exists-action': oneOf(['override', 'skip', 'append', 'delete'], { default: 'override' }),
  },
  content: elements({ name: 'value', content: text(true) }),
  compile(node, c) {
    const name = node.getter('name');
    const action = node.getter('exists-action');
    const values = node.childrenNamed('value').map((v) => v.text() ?? (() => ''));
    const target = c.target;
    return (run) => {
      const query = requestOf(run, target).url.query;
      const param = name(run);
      switch (action(run)) {
        case 'delete':
          query.delete(param);
          break;
        case 'skip':
          if (!query.has(param))
            query.set(
              param,
              values.map((v) => v(run)),
            );
          break;
        case 'append':
          query.append(
            param,
            values.map((v) => v(run)),
          );
          break;
        case 'override':
          query.set(
            param,
            values.map((v) => v(run)),
          );
          break;
        default:
          throw new TypeError('set-query-parameter/@exists-action must be override, skip, append or delete');
      }
      return 'next';
    };
  },
});
