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
            // Close each ext_proc stream with a half-close and let the engine finish it with OK, instead of a
            // half-close followed by RST_STREAM: a reset per request trips Node's HTTP/2 reset-rate limit (1000 at
            // once, 33 a second), which drops the whole connection and fails every stream on it. The engine ends
            // each stream itself once it has answered the last phase; a stream Envoy half-closes first belongs to
            // a filter that is gone, and the engine writes nothing to it (a status reaching such a stream can crash
            // Envoy 1.40: README, Security, "Request bodies"), so Envoy resets it after its remote-close timeout.
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
