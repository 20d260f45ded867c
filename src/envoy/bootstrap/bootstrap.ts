/**
 * Builds Envoy's static bootstrap for a gateway. Pure data in, a typed plain object out (config-types.ts; printed as
 * YAML by the CLI), so tests can assert on it and `envoy --mode validate` can check it. This file composes the
 * bootstrap from one file per Envoy object: listeners.ts, connection-manager.ts, http-filters.ts, routes.ts,
 * clusters.ts, the transport sockets of tls.ts, the access rules of rbac.ts, and the management listener, tracing and
 * engine bypass beside them; what they are built from is plan.ts.
 */

import type { Bootstrap } from '../config-types.js';
import { gatewayClusters, staticCluster, urlCluster } from './clusters.js';
import { buildListener } from './listeners.js';
import { adminClusterName, managementClusterName } from './management.js';
import { type BootstrapPlan, listenersOf } from './plan.js';
import { collectorCluster } from './tracing.js';
import { socketAddress } from './values.js';

export function buildBootstrap(plan: BootstrapPlan): Bootstrap {
  return {
    node: { id: 'portcullis', cluster: 'portcullis' },
    admin: { address: socketAddress(plan.admin) },
    layered_runtime: {
      layers: [
        {
          name: 'portcullis',
          static_layer: {
            // Off: with graceful close, a filter destroyed while its ext_proc stream is open (the client left, a
            // timeout tore the request down) half-closes the stream and parks it until the engine's status arrives,
            // and in Envoy 1.40 that status (or a reset) reaching the stream of a destroyed filter can segfault the
            // whole process (docs/security.md, "Request bodies"). Off, Envoy resets each stream when its filter is
            // done; the engine writes nothing after a half-close, and the engine cluster bounds the streams per
            // connection so those resets never reach Node's reset-rate limit (clusters.ts).
            'envoy.reloadable_features.ext_proc_graceful_grpc_close': false,
            // The routes that skip the engine match an API's operations with one regex per method (engine-bypass.ts);
            // Envoy's default bound on a regex's compiled size (100) refuses any but the smallest API.
            're2.max_program_size.error_level': 100_000,
          },
        },
      ],
    },
    // Keep the overload manager quiet about the missing downstream connection limit, and bound it.
    overload_manager: {
      resource_monitors: [
        {
          name: 'envoy.resource_monitors.global_downstream_max_connections',
          typed_config: {
            '@type':
              'type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig',
            max_active_downstream_connections: 50_000,
          },
        },
      ],
    },
    static_resources: {
      listeners: listenersOf(plan).map((listener) => buildListener(plan, listener)),
      clusters: [
        ...gatewayClusters(plan),
        ...(listenersOf(plan).some((listener) => listener.role === 'management')
          ? [staticCluster(adminClusterName, plan.admin)]
          : []),
        ...(plan.management ? [staticCluster(managementClusterName, plan.management)] : []),
        ...(plan.tracing ? [collectorCluster(plan.tracing, urlCluster)] : []),
      ],
    },
  };
}
