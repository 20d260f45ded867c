import { defineElement } from '../element.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, int, oneOf, str } from '../schema.js';

/** Stores a value (as the expression produced it) in the value cache for `duration` seconds. */
export const cacheStoreValue = defineElement({
  name: 'cache-store-value',
  summary: 'Stores a value in the cache.',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    key: str({ required: true }),
    value: str({ required: true }),
    duration: int({ required: true, min: 0 }),
    'caching-type': oneOf(['internal', 'external', 'prefer-external'], {
      default: 'prefer-external',
      expression: false,
    }),
  },
  content: EMPTY,
  compile(node) {
    const key = node.getter('key');
    const caching = node.literal('caching-type');
    const value = node.rawGetter('value');
    const duration = node.getter('duration');
    return async (run): Promise<'next'> => {
      const seconds = duration(run);
      if (seconds > 0) await run.services.valueCache.set(key(run), value(run), seconds, caching);
      return 'next';
    };
  },
});
