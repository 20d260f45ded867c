import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { OAuthError } from './errors.js';
import { clientEndpoint } from './http.js';
import type { AuthLogger } from './options.js';

export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One path of the authorization server and what answers each method it takes (GET answers HEAD too). */
export interface Route {
  readonly name: string;
  /** An exact path (case-sensitive, no trailing slash added), or a pattern for a path with a parameter. */
  readonly path: string | RegExp;
  readonly methods: Partial<Record<RouteMethod, Middleware>>;
  /**
   * Called by clients, maybe from a browser: clientEndpoint() goes in front (CORS and preflights, caching, JSON
   * errors). The authorization endpoint and its pages are not client endpoints.
   */
  readonly client?: { readonly cacheControl?: string };
}

/**
 * The router of the routes: each method goes to its handler; any other method is 405 with Allow naming the methods
 * (an OPTIONS too, except on client endpoints, which answer preflights); a path not in the table is left to the
 * next middleware (the MCP endpoint).
 */
export function routerOf(routes: readonly Route[], logger: AuthLogger): Router {
  const router = new Router();
  for (const route of routes) {
    const path = typeof route.path === 'string' ? exactPath(route.path) : route.path;
    const options = { name: route.name, pathAsRegExp: true };
    const allowed = Object.keys(route.methods).join(', ');
    const front = route.client ? [clientEndpoint({ methods: allowed, logger, ...route.client })] : [];
    for (const [method, handler] of Object.entries(route.methods))
      router.register(path, [method], [...front, handler], options);
    if (route.client) router.register(path, ['OPTIONS'], front, options);
    router.all(route.name, path, methodNotAllowed(allowed));
  }
  return router;
}

function exactPath(path: string): RegExp {
  return new RegExp(`^${escapeRegExp(path)}$`);
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function methodNotAllowed(allowed: string): Middleware {
  return (ctx: Context) => {
    ctx.set('Allow', allowed);
    const error = new OAuthError('invalid_request', `method ${ctx.method} is not allowed here`);
    ctx.status = 405;
    ctx.type = 'application/json';
    ctx.body = JSON.stringify(error.toJSON());
  };
}
