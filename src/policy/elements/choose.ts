import { defineElement } from '../element.js';
import { type Getter, sequence } from '../node.js';
import type { Statement } from '../runtime.js';
import { ALL_SCOPES, ALL_SECTIONS, bool, elements, POLICIES } from '../schema.js';

/** Runs the statements of the first `when` whose condition is true, else those of `otherwise`. */
export const choose = defineElement({
  name: 'choose',
  summary: 'Conditional: the first true <when> runs, else <otherwise>.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {},
  content: elements(
    { name: 'when', min: 1, attributes: { condition: bool({ required: true }) }, content: POLICIES },
    { name: 'otherwise', max: 1, content: POLICIES },
  ),
  compile(node, c) {
    const branches: [Getter<boolean>, Statement][] = [];
    let otherwise: Statement | undefined;
    node.eachChild({
      when: (child) => {
        if (otherwise !== undefined)
          c.error(child, 'children', '<when> must come before <otherwise>, got <when> after it');
        else branches.push([child.getter('condition'), sequence(child.statements)]);
      },
      otherwise: (child) => {
        otherwise = sequence(child.statements);
      },
    });
    return (run) => {
      // Later conditions are not evaluated once one is true, as in API Management.
      for (const [condition, body] of branches) if (condition(run)) return body(run);
      return otherwise === undefined ? 'next' : otherwise(run);
    };
  },
});
