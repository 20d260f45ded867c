import { defineElement } from '../element.js';
import type { RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, elements, oneOf, text } from '../schema.js';
import type { CachingType } from '../services.js';
import { servedResponse } from '../shared/stored-response.js';

/**
 * Looks the request up in the response cache. A hit answers at once (the backend is not called); a miss leaves
 * the key on the run for cache-store. Only GET is cached, and a request carrying Authorization only when
 * allow-private-response-caching is true.
 */
export const cacheLookup = defineElement({
  name: 'cache-lookup',
  summary: 'Serves a cached response when one matches the request.',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    'vary-by-developer': bool({ required: true }),
    'vary-by-developer-groups': bool({ required: true }),
    'caching-type': oneOf(['internal', 'external', 'prefer-external'], {
      default: 'prefer-external',
      expression: false,
    }),
    'downstream-caching-type': oneOf(['none', 'private', 'public'], { default: 'none' }),
    'must-revalidate': bool({ default: true }),
    'allow-private-response-caching': bool({ default: false }),
  },
  content: elements(
    { name: 'vary-by-header', content: text(true, true) },
    { name: 'vary-by-query-parameter', content: text(true, true) },
  ),
  oncePerSection: true,
  touchesResponse: true,
  compile(node) {
    const byDeveloper = node.getter('vary-by-developer');
    const byGroups = node.getter('vary-by-developer-groups');
    const downstream = node.getter('downstream-caching-type');
    const mustRevalidate = node.getter('must-revalidate');
    const allowPrivate = node.getter('allow-private-response-caching');
    const caching: CachingType = node.literal('caching-type');
    const headers = node.childrenNamed('vary-by-header').map((h) => h.text());
    const queries = node.childrenNamed('vary-by-query-parameter').map((q) => q.text());
    const key = (run: RunContext): string => {
      const ctx = run.context;
      const request = ctx.request;
      const parts = [`api=${ctx.api.id}`, `op=${ctx.operation.id}`, `path=${request.url.path}`];
      if (queries.length === 0) {
        parts.push(`query=${request.url.queryString}`);
      } else {
        const names = queries
          .flatMap((q) => q(run).split(';'))
          .map((n) => n.trim())
          .filter((n) => n !== '');
        for (const name of [...new Set(names)].sort())
          parts.push(`q:${name}=${JSON.stringify(request.url.query.get(name) ?? null)}`);
      }
      for (const h of headers) {
        const name = h(run).trim();
        parts.push(`h:${name.toLowerCase()}=${JSON.stringify(request.headers.get(name) ?? null)}`);
      }
      if (byDeveloper(run)) parts.push(`dev=${ctx.user?.id ?? ''}`);
      if (byGroups(run))
        parts.push(
          `groups=${(ctx.user?.groups ?? [])
            .map((g) => g.id)
            .sort()
            .join(',')}`,
        );
      return parts.join('\n');
    };
    return async (run) => {
      const request = run.context.request;
      if (request.method !== 'GET') return 'next';
      if (request.headers.has('Authorization') && !allowPrivate(run)) return 'next';
      const k = key(run);
      const mode = downstream(run);
      run.downstreamCacheControl =
        mode === 'none' ? undefined : `${mode}${mustRevalidate(run) ? ', must-revalidate' : ''}`;
      run.cachingType = caching;
      const hit = await run.services.responseCache.get(k, caching);
      if (hit === undefined) {
        run.cacheKey = k;
        return 'next';
      }
      run.context.response = servedResponse(hit);
      run.servedFromCache = true;
      return 'respond';
    };
  },
});
