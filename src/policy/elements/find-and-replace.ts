import { defineElement } from '../element.js';
import { bodyText, messageOf, replaceBody } from '../message.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, str } from '../schema.js';

/** Replaces every occurrence of a string in the message body. */
export const findAndReplace = defineElement({
  name: 'find-and-replace',
  summary: 'Replaces every occurrence of a string in the body.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: { from: str({ required: true }), to: str({ required: true }) },
  content: EMPTY,
  body: 'read-write',
  compile(node, c) {
    const from = node.getter('from');
    const to = node.getter('to');
    const target = c.target;
    return (run) => {
      const message = messageOf(run, target);
      if (message.body === null) return 'next';
      const needle = from(run);
      if (needle === '') return 'next';
      const text = bodyText(message);
      if (!text.includes(needle)) return 'next';
      replaceBody(run, target, text.split(needle).join(to(run)));
      return 'next';
    };
  },
});
