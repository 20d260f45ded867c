/**
 * The Envoy that stands in front of a backend which needs only a private address (spec §4.3.1): it listens on
 * the backend's private address, lets a connection through to the backend only when the access rules allow its
 * source (first matching rule by priority, as a network security group), and refuses every other. It works on
 * TCP, so it is the same for HTTP and HTTPS backends and never sees the requests' content.
 */
import type { AccessRule, Endpoint } from './bootstrap/plan.js';
import { rbacFilter } from './bootstrap/rbac.js';
import { isIpLiteral, socketAddress } from './bootstrap/values.js';
import type { Bootstrap } from './config-types.js';

export interface SidecarPlan {
  /** The API or named backend it fronts (names the listener and its counters). */
  readonly backend: string;
  readonly listen: Endpoint;
  /** The backend process; a host name is resolved by Envoy. */
  readonly target: Endpoint;
  readonly admin: Endpoint;
  /** In evaluation order; the first that matches decides, no match refuses. */
  readonly rules: readonly AccessRule[];
}

const targetCluster = 'backend';

/** Counters of the access rules: `backend_access.rbac.allowed` and `backend_access.rbac.denied`. */
export const sidecarStatPrefix = 'backend_access.';

export function buildSidecarBootstrap(plan: SidecarPlan): Bootstrap {
  const ip = isIpLiteral(plan.target.host);
  return {
    node: { id: `portcullis-sidecar-${plan.backend}`, cluster: 'portcullis-sidecar' },
    admin: { address: socketAddress(plan.admin) },
    static_resources: {
      listeners: [
        {
          name: `backend_${plan.backend}`,
          address: socketAddress(plan.listen),
          filter_chains: [
            {
              filters: [
                rbacFilter(sidecarStatPrefix, plan.rules),
                {
                  name: 'envoy.filters.network.tcp_proxy',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
                    stat_prefix: `backend_${plan.backend}`,
                    cluster: targetCluster,
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: [
        {
          name: targetCluster,
          type: ip ? 'STATIC' : 'STRICT_DNS',
          dns_lookup_family: 'V4_PREFERRED',
          connect_timeout: '2s',
          load_assignment: {
            cluster_name: targetCluster,
            endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(plan.target) } }] }],
          },
        },
      ],
    },
  };
}
