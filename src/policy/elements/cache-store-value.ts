import type { ElementDefinition } from '../element.js';
import { valueGetter } from '../node.js';
import { ALL_SCOPES, ALL_SECTIONS, EMPTY, int, oneOf, str } from '../schema.js';
import type { CachingType } from '../services.js';

/** Stores a value (as the expression produced it) in the value cache for `duration` seconds. */
export const cacheStoreValue: ElementDefinition = {
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
    const key = node.string('key')!;
    const caching = node.literal('caching-type') as CachingType;
    const value = valueGetter(node.attributes.get('value')!);
    const duration = node.int('duration')!;
    return async (run): Promise<'next'> => {
      const seconds = duration(run);
      if (seconds > 0) await run.services.valueCache.set(key(run), value(run), seconds, caching);
      return 'next';
    };
  },
};
