import type { ElementDefinition } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, oneOf, str } from '../schema.js';
import type { CachingType } from '../services.js';

/** Removes a value from the value cache. */
export const cacheRemoveValue: ElementDefinition = {
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
    const key = node.string('key')!;
    const caching = node.literal('caching-type') as CachingType;
    return async (run): Promise<'next'> => {
      await run.services.valueCache.delete(key(run), caching);
      return 'next';
    };
  },
};
