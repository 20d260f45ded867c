import { defineElement } from '../element.js';
import { requestOf } from '../message.js';
import { GPAO, text } from '../schema.js';

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Changes the HTTP method of the request (or of the request send-request builds). */
export const setMethod = defineElement({
  name: 'set-method',
  summary: 'Sets the HTTP method.',
  sections: ['inbound', 'on-error'],
  scopes: GPAO,
  attributes: {},
  content: text(true, true),
  compile(node, c) {
    const literal = node.content?.kind === 'literal' ? String(node.content.value) : undefined;
    if (literal !== undefined && !TOKEN.test(literal)) {
      c.error(node, 'children', `set-method must be an HTTP method, got "${literal}"`);
    }
    const method = node.text();
    const target = c.target;
    return (run) => {
      const m = method(run).trim();
      if (!TOKEN.test(m)) throw new TypeError(`set-method must be an HTTP method, got "${m}"`);
      requestOf(run, target).method = m.toUpperCase();
      return 'next';
    };
  },
});
