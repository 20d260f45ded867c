import type { ElementDefinition } from '../element.js';
import { valueGetter } from '../node.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, str } from '../schema.js';

/** Stores a value in context.Variables: a literal as a string, an expression's result as it is. */
export const setVariable: ElementDefinition = {
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
    const name = String(node.literal('name'));
    const value = valueGetter(node.attributes.get('value')!);
    return (run) => {
      run.context.variables.set(name, value(run));
      return 'next';
    };
  },
};
