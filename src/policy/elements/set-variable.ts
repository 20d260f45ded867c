import { defineElement } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, str } from '../schema.js';

/** Stores a value in context.Variables: a literal as a string, an expression's result as it is. */
export const setVariable = defineElement({
  name: 'set-variable',
  summary: 'Stores a value in context.Variables.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    name: str({ required: true, expression: false }),
    value: str({ required: true }),
  },
  content: EMPTY,
  compile(node) {
    const name = node.literal('name');
    const value = node.rawGetter('value');
    return (run) => {
      run.context.variables.set(name, value(run));
      return 'next';
    };
  },
});
