import { defineElement } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, oneOf, str } from '../schema.js';

/** Reads a value from the value cache into a variable (default-value on a miss, when given). */
export const cacheLookupValue = defineElement({
  name: 'cache-lookup-value',
  summary: 'Reads a cached value into a variable.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    key: str({ required: true }),
    'variable-name': str({ required: true, expression: false }),
    'default-value': str(),
    'caching-type': oneOf(['internal', 'external', 'prefer-external'], {
      default: 'prefer-external',
      expression: false,
    }),
  },
  content: EMPTY,
  compile(node) {
    const key = node.getter('key');
    const caching = node.literal('caching-type');
    const variable = node.literal('variable-name');
    const fallback = node.rawGetter('default-value');
    return async (run): Promise<'next'> => {
      const value = await run.services.valueCache.get(key(run), caching);
      if (value !== undefined) run.context.variables.set(variable, value);
      else if (fallback !== undefined) run.context.variables.set(variable, fallback(run));
      return 'next';
    };
  },
});
