/**
 * The gateway's route configuration: one virtual host per set of host names, each with the route that takes the
 * backend the engine chose, the Koa service's paths, each API's routes (and the routes that skip the engine for an
 * API it would only pass through), and API Management's 404 for everything else.
 */

import type { Route, RouteAction, VirtualHost } from '../config-types.js';
import { apiClusterName, backendSelectionHeader, serviceClusterName, setClientAddress } from '../contract.js';
import { bypassFilterConfig, bypassMatches, bypassRequestHeaders } from './engine-bypass.js';
import { extProcDisabled } from './http-filters.js';
import { type BootstrapApi, type BootstrapPlan, limitsOf } from './plan.js';
import { escapeRegex } from './values.js';

/**
 * Paths the Koa service answers, on every host (issuer and base URL may be two hosts; both are origins without a
 * path). Each is matched as a path-separated prefix (`/v1/authorize` covers `/v1/authorize/login` and
 * `/v1/authorize/consent`, `/v1/register` covers RFC 7592's `/v1/register/<client_id>`, `/v1/mcp` covers
 * `/v1/mcp/`, and the well-known names cover their path-inserted forms). Nothing else reaches the service.
 */
export const servicePathPrefixes = [
  '/v1/mcp',
  '/v1/authorize',
  '/v1/token',
  '/v1/register',
  '/v1/introspect',
  '/v1/jwks',
  '/.well-known/oauth-authorization-server',
  '/.well-known/oauth-protected-resource',
] as const;

/** The API Management answer for a URL that matches no API. */
const notFoundBody = '{ "statusCode": 404, "message": "Resource not found" }';

export function virtualHosts(plan: BootstrapPlan): VirtualHost[] {
  // One virtual host per distinct host set; APIs without hostnames live on the catch-all host.
  const hostSets = new Map<string, BootstrapApi[]>();
  for (const api of plan.apis) {
    const key = api.hostnames ? [...api.hostnames].sort().join(',') : '*';
    hostSets.set(key, [...(hostSets.get(key) ?? []), api]);
  }
  if (!hostSets.has('*')) hostSets.set('*', []);
  return [...hostSets.entries()].map(([key, apis]) => ({
    name: key === '*' ? 'any_host' : `hosts_${key.replace(/[^A-Za-z0-9]+/g, '_')}`,
    domains: key === '*' ? ['*'] : key.split(',').flatMap((host) => [host, `${host}:*`]),
    // On every route of the host, including the one the engine's backend choice re-selects, so the limit a body
    // is buffered against does not change when the route does; and the same for HTTP/1 and HTTP/2 clients (HTTP/2
    // would otherwise buffer up to its stream window, 256 MiB).
    request_body_buffer_limit: limitsOf(plan).maxRequestBodyBytes,
    routes: [
      backendSelectionRoute(),
      ...serviceRoutes(),
      // A route that skips the engine must not take a request of an API with a longer suffix (`v1/courses` under
      // `v1`); the engine itself tries longer suffixes first.
      ...[...apis]
        .sort((a, b) => b.urlSuffix.length - a.urlSuffix.length)
        .filter(firstOfVersionSet())
        .flatMap(apiRoutes),
      notFoundRoute(),
    ],
  }));
}

/**
 * After the engine ran, the request carries the backend cluster in a header and its final `:path`; this route
 * sends it there. A client that sends the header itself also lands here first, but ext_proc runs on this route
 * and the engine strips the client's copy before the route is picked again.
 */
export function backendSelectionRoute(): Route {
  return {
    name: 'engine_selected_backend',
    match: { prefix: '/', headers: [{ name: backendSelectionHeader, present_match: true }] },
    route: { cluster_header: backendSelectionHeader, timeout: '30s', auto_host_rewrite: true },
    request_headers_to_remove: [backendSelectionHeader],
  };
}

export function serviceRoutes(): Route[] {
  return servicePathPrefixes.map<Route>((prefix) => ({
    name: `service${prefix.replace(/[^A-Za-z0-9]+/g, '_')}`,
    match: prefix.endsWith('/') ? { prefix } : { path_separated_prefix: prefix },
    // The MCP endpoint keeps server-sent-event streams open (GET, list_changed): no overall deadline there, only
    // an idle one; every other service path answers within a minute.
    route:
      prefix === '/v1/mcp'
        ? { cluster: serviceClusterName, timeout: '0s', idle_timeout: '600s' }
        : { cluster: serviceClusterName, timeout: '60s' },
    // The service is ours, not a published API: no policy runs in front of it.
    typed_per_filter_config: extProcDisabled,
    // The address Envoy trusts, overwriting a client's copy (the engine, which strips the others, is off here).
    request_headers_to_add: setClientAddress,
  }));
}

/**
 * A filter that keeps one API of each header- or query-versioned set: its versions share one URL suffix, so a route
 * for each would repeat the first one's match, unreachable. The one route leads through the engine (no version gets
 * a bypass), which picks the version and sets the backend; the route's own backend is never used by itself.
 */
function firstOfVersionSet(): (api: BootstrapApi) => boolean {
  const routed = new Set<string>();
  return (api) => {
    if (api.versionSet === undefined) return true;
    if (routed.has(api.versionSet)) return false;
    routed.add(api.versionSet);
    return true;
  };
}

/**
 * The API's route, through the engine; before it, for an API the engine would only pass through, the routes that
 * skip it (with the timeout forward-request gives the backend call by default, as the engine would set).
 */
function apiRoutes(api: BootstrapApi): Route[] {
  const backend = new URL(api.serviceUrl);
  const basePath = backend.pathname.replace(/\/+$/, '');
  const toBackend = (timeout: RouteAction['timeout']): RouteAction => ({
    cluster: apiClusterName(api.id),
    // `/<suffix>/api/Course` reaches the backend as `<service path>/api/Course`.
    regex_rewrite: {
      pattern: { regex: `^/${escapeRegex(api.urlSuffix)}(/|$)` },
      substitution: `${basePath}/`,
    },
    host_rewrite_literal: backend.host,
    timeout,
  });
  const bypass = api.engineBypass
    ? bypassMatches(api.urlSuffix, api.engineBypass).map<Route>((match, index) => ({
        name: `api_${api.id}_bypass_${index}`,
        match,
        route: toBackend(`${forwardRequestTimeoutSeconds}s`),
        request_headers_to_add: bypassRequestHeaders,
        typed_per_filter_config: bypassFilterConfig,
      }))
    : [];
  return [
    ...bypass,
    {
      name: `api_${api.id}`,
      match: { path_separated_prefix: `/${api.urlSuffix}` },
      route: api.websocket ? websocketRoute(toBackend('0s')) : toBackend('30s'),
    },
  ];
}

/**
 * A WebSocket API's route: the handshake may upgrade (Envoy decides that on the route the request first matched,
 * this one, even when the engine's choice re-selects `engine_selected_backend`), and the upgraded connection,
 * which lasts as long as its two ends want, has no overall deadline: only the connection manager's idle timeout.
 */
function websocketRoute(action: RouteAction): RouteAction {
  return { ...action, upgrade_configs: [{ upgrade_type: 'websocket' }] };
}

/** forward-request's default timeout (API Management's), which the engine sets on a request it forwards. */
const forwardRequestTimeoutSeconds = 300;

function notFoundRoute(): Route {
  return {
    name: 'not_found',
    match: { prefix: '/' },
    direct_response: { status: 404, body: { inline_string: notFoundBody } },
    response_headers_to_add: [{ header: { key: 'content-type', value: 'application/json' } }],
    typed_per_filter_config: extProcDisabled,
  };
}
