/**
 * What to paste into an Envoy Portcullis did not configure (`portcullis envoy-config --snippet`): the same pieces
 * the generated bootstrap is made of (bootstrap/), without the listeners, virtual hosts and API routes that are
 * the operator's own.
 */
import { gatewayClusters } from './bootstrap/clusters.js';
import { dynamicForwardProxyFilter, extProcFilter } from './bootstrap/http-filters.js';
import type { BootstrapPlan } from './bootstrap/plan.js';
import { backendSelectionRoute, serviceRoutes } from './bootstrap/routes.js';
import type { Cluster, HttpFilter, Route } from './config-types.js';
import { routeAttributes } from './contract.js';

export interface EnvoySnippet {
  /** Before the router filter of the operator's HTTP connection manager, in this order. */
  readonly http_filters: readonly HttpFilter[];
  /**
   * First in each virtual host that serves an API: the route that takes the backend the engine chose, then the
   * Koa service's paths (OAuth, MCP, the well-known documents), which skip the engine.
   */
  readonly routes: readonly Route[];
  /** The engine, the service, each API's and named backend's cluster, the dynamic forward proxy's clusters. */
  readonly clusters: readonly Cluster[];
}

export function buildEnvoySnippet(plan: BootstrapPlan): EnvoySnippet {
  return {
    http_filters: [extProcFilter(plan, Object.values(routeAttributes)), dynamicForwardProxyFilter()],
    routes: [backendSelectionRoute(), ...serviceRoutes()],
    clusters: gatewayClusters(plan),
  };
}
