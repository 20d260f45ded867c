import { defineElement } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, str } from '../schema.js';

/** Inlines a policy fragment at load time; nothing of the element remains at run time. */
export const includeFragment = defineElement({
  name: 'include-fragment',
  summary: 'Inserts the statements of a <fragment> document.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: { 'fragment-id': str({ required: true, expression: false }) },
  content: EMPTY,
  compile(node, c) {
    return c.includeFragment(node.literal('fragment-id'), node) ?? (() => 'next');
  },
});
