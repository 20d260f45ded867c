import { defineElement } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, oneOf, str } from '../schema.js';

/** Removes a value from the value cache. */
export const cacheRemoveValue = defineElement({
  name: 'cache-remove-value',
  summary: 'Removes a cached value.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    key: str({ required: true }),
    'caching-type': oneOf(['internal', 'external', 'prefer-external'], {
      default: 'prefer-external',
      expression: false,
    }),
  },
  content: EMPTY,
  compile(node) {
    const key = node.getter('key');
    const caching = node.literal('caching-type');
    return async (run): Promise<'next'> => {
      await run.services.valueCache.delete(key(run), caching);
      return 'next';
    };
  },
});
