import { defineElement } from '../element.js';
import { ALL_SCOPES, bool, EMPTY, int } from '../schema.js';
import { storedResponse } from '../shared/stored-response.js';

/**
 * Stores the response under the key cache-lookup computed. Only cacheable responses are stored: a GET that
 * cache-lookup looked up, status 200 (any status with cache-response="true"), and no `no-store` or `private`
 * directive from the backend.
 */
export const cacheStore = defineElement({
  name: 'cache-store',
  summary: 'Stores the response in the cache for the given duration.',
  sections: ['outbound'],
  scopes: ALL_SCOPES,
  attributes: { duration: int({ required: true, min: 0 }), 'cache-response': bool() },
  content: EMPTY,
  body: 'read',
  oncePerSection: true,
  compile(node) {
    const duration = node.getter('duration');
    const cacheResponse = node.getter('cache-response');
    return async (run): Promise<'next'> => {
      const key = run.cacheKey;
      const response = run.context.response;
      if (key === undefined || response === null) return 'next';
      const seconds = duration(run);
      if (run.downstreamCacheControl !== undefined) {
        const [mode, ...rest] = run.downstreamCacheControl.split(', ');
        response.headers.set('Cache-Control', [`${mode}, max-age=${seconds}`, ...rest].join(', '));
      }
      const anyStatus = cacheResponse?.(run) === true;
      if (!anyStatus && response.statusCode !== 200) return 'next';
      const directives = (response.headers.getJoined('Cache-Control') ?? '').toLowerCase();
      if (run.downstreamCacheControl === undefined && /\b(no-store|private)\b/.test(directives))
        return 'next';
      if (seconds <= 0) return 'next';
      await run.services.responseCache.set(key, storedResponse(response), seconds, run.cachingType);
      return 'next';
    };
  },
});
