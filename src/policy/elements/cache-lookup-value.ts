import type { ElementDefinition } from '../element.js';
import { valueGetter } from '../node.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, oneOf, str } from '../schema.js';
import type { CachingType } from '../services.js';

/** Reads a value from the value cache into a variable (default-value on a miss, when given). */
export const cacheLookupValue: ElementDefinition = {
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
    const key = node.string('key')!;
    const caching = node.literal('caching-type') as CachingType;
    const variable = String(node.literal('variable-name'));
    const fallback = node.has('default-value')
      ? valueGetter(node.attributes.get('default-value')!)
      : undefined;
    return async (run): Promise<'next'> => {
      const value = await run.services.valueCache.get(key(run), caching);
      if (value !== undefined) run.context.variables.set(variable, value);
      else if (fallback !== undefined) run.context.variables.set(variable, fallback(run));
      return 'next';
    };
  },
};
