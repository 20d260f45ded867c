import { defineElement } from '../element.js';
import { type Getter, type Location, sequence } from '../node.js';
import type { Flow, RunContext, Statement } from '../runtime.js';
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
    const whens: Location[] = [];
    let otherwise: Statement | undefined;
    let otherwiseAt: Location | undefined;
    node.eachChild({
      when: (child) => {
        if (otherwise !== undefined)
          c.error(child, 'children', '<when> must come before <otherwise>, got <when> after it');
        else {
          branches.push([child.getter('condition'), sequence(child.statements)]);
          whens.push(child.location);
        }
      },
      otherwise: (child) => {
        otherwise = sequence(child.statements);
        otherwiseAt = child.location;
      },
    });
    const observed = (run: RunContext): Flow | Promise<Flow> => {
      const conditions: boolean[] = [];
      let taken: number | 'otherwise' | 'none' = otherwise === undefined ? 'none' : 'otherwise';
      for (const [index, [condition]] of branches.entries()) {
        conditions.push(condition(run));
        if (conditions[index]) {
          taken = index;
          break;
        }
      }
      const location = node.location;
      run.services.observer!.branchTaken({ location, whens, otherwise: otherwiseAt, taken, conditions }, run);
      if (typeof taken === 'number') return branches[taken]![1](run);
      return otherwise === undefined ? 'next' : otherwise(run);
    };
    return (run) => {
      if (run.services.observer?.observes(run)) return observed(run);
      // Later conditions are not evaluated once one is true, as in API Management.
      for (const [condition, body] of branches) if (condition(run)) return body(run);
      return otherwise === undefined ? 'next' : otherwise(run);
    };
  },
});
