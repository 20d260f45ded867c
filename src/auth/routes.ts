import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import type { Logger } from '../log.js';
import { authorizationFlow } from './authorize/index.js';
import { jwksEndpoint, metadataEndpoint, PUBLIC_CACHE } from './endpoints/metadata.js';
import { registrationEndpoint, registrationManagementEndpoints } from './endpoints/register.js';
import { introspectionEndpoint, tokenEndpoint } from './endpoints/token.js';
import { OAuthError } from './errors.js';
import { clientEndpoint } from './http.js';
import type { ServerContext } from './server-context.js';

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
 * Every path of the server. Paths come from the configured URLs, so {base_url} and {auth_url} may be one origin or
 * two hosts (Envoy routes by host; each path exists once either way). The registration management route comes
 * first: everything under the registration endpoint's path is a client id.
 */
export function routeTable(server: ServerContext): Route[] {
  const { options } = server;
  const flow = authorizationFlow(server);
  const pathOf = (url: string) => new URL(url).pathname;
  const registrationPath = pathOf(options.endpoints.registration);
  const clientIdOf = (ctx: Context) => decodeClientId(ctx.path.slice(registrationPath.length + 1));
  const manage = registrationManagementEndpoints(server, clientIdOf);
  const metadata = metadataEndpoint(server);
  const routes: Route[] = [
    {
      name: 'registration management',
      path: new RegExp(`^${escapeRegExp(registrationPath)}/`),
      methods: { GET: manage.read, PUT: manage.update, DELETE: manage.delete },
      client: {},
    },
    ...options.metadataPaths.map((path) => ({
      name: `metadata ${path}`,
      path,
      methods: { GET: metadata },
      client: { cacheControl: PUBLIC_CACHE },
    })),
    // Short cache: a rotated-in key must reach verifiers before it signs (the next key is published early).
    {
      name: 'jwks',
      path: pathOf(options.endpoints.jwks),
      methods: { GET: jwksEndpoint(server) },
      client: { cacheControl: PUBLIC_CACHE },
    },
    {
      name: 'registration',
      path: registrationPath,
      methods: { POST: registrationEndpoint(server) },
      client: {},
    },
    {
      name: 'token',
      path: pathOf(options.endpoints.token),
      methods: { POST: tokenEndpoint(server) },
      client: {},
    },
    {
      name: 'introspection',
      path: pathOf(options.endpoints.introspection),
      methods: { POST: introspectionEndpoint(server) },
      client: {},
    },
    {
      name: 'authorization',
      path: pathOf(options.endpoints.authorization),
      methods: { GET: flow.authorize },
    },
    { name: 'login', path: pathOf(options.endpoints.login), methods: { POST: flow.login } },
    {
      name: 'consent',
      path: pathOf(options.endpoints.consent),
      methods: { GET: flow.consentPage, POST: flow.consent },
    },
  ];
  if (flow.upstream) {
    routes.push(
      {
        name: 'upstream sign-in',
        path: pathOf(options.endpoints.upstreamStart),
        methods: { POST: flow.upstream.start },
      },
      {
        name: 'upstream callback',
        path: pathOf(options.endpoints.upstreamCallback),
        methods: { GET: flow.upstream.callback },
      },
    );
  }
  return routes;
}

/** A client id that is not valid percent-encoding stays as written: no client has it, so it is refused like any unknown one. */
function decodeClientId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}

/**
 * The router of the routes: each method goes to its handler; any other method is 405 with Allow naming the methods
 * (an OPTIONS too, except on client endpoints, which answer preflights); a path not in the table is left to the
 * next middleware (the MCP endpoint).
 */
export function routerOf(routes: readonly Route[], logger: Logger): Router {
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

function escapeRegExp(text: string): string {
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
