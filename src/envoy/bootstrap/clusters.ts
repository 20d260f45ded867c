/**
 * The clusters behind the gateway's routes: the engine (ext_proc over gRPC), the Koa service, each API's and named
 * backend's, and the dynamic forward proxy's for a backend a policy names by URL.
 */

import type { Cluster, DnsLookupFamily } from '../config-types.js';
import { apiClusterName, dynamicClusterName, engineClusterName, serviceClusterName } from '../contract.js';
import { backendEntityClusters } from './backend-pools.js';
import { dnsCacheConfig } from './http-filters.js';
import { type BootstrapPlan, type Endpoint, limitsOf } from './plan.js';
import { systemCaFile } from './tls.js';
import { backendIdleTimeout, urlCluster } from './url-cluster.js';
import { isIpLiteral, socketAddress } from './values.js';

export { urlCluster } from './url-cluster.js';

/**
 * The clusters the engine's answers route to and the processes behind Envoy: the engine, the service, each API's
 * and named backend's, the dynamic forward proxy's. The generated bootstrap and the snippet for an operator's Envoy
 * both carry exactly these.
 */
export function gatewayClusters(plan: BootstrapPlan): Cluster[] {
  return [
    engineCluster(plan),
    serviceCluster(plan),
    ...plan.apis.map((api) => {
      const cluster = urlCluster(apiClusterName(api.id), api.serviceUrl, plan.upstreamTls?.[api.id]);
      return api.websocket ? webSocketBounded(cluster, limitsOf(plan).webSocketConnections) : cluster;
    }),
    ...backendEntityClusters(plan),
    dynamicCluster(false),
    dynamicCluster(true),
  ];
}

/**
 * A WebSocket API's cluster, carrying at most `limit` upgraded connections at once (`gateway.limits
 * .webSocketConnections`). An upgraded connection is one request of the cluster for as long as it is open, on an
 * upstream connection of its own, so `max_requests` is the bound, counted over all of Envoy's workers. The pool may
 * open one connection more than that: on it Envoy finds at once that the handshake beyond the bound has no room (503,
 * `upstream_rq_pending_overflow`) rather than queueing it until a connection closes, which Envoy's defaults (1,024
 * connections and requests) would do from the 1,025th on. Pending handshakes (waiting for a connection to open) keep
 * Envoy's default bound.
 */
function webSocketBounded(cluster: Cluster, limit: number): Cluster {
  return {
    ...cluster,
    circuit_breakers: {
      thresholds: [{ max_connections: limit + 1, max_pending_requests: 1024, max_requests: limit }],
    },
  };
}

/**
 * Envoy resets every ext_proc stream when it is done with it (graceful close is off: see `layered_runtime`), and
 * Node's HTTP/2 server closes a connection on which its peer reset more than 1000 streams at once or 33 a second
 * for long (nghttp2's defense against rapid reset; Node 20 cannot change it). A connection that carries at most
 * this many streams never gets there: Envoy opens the next one (an engine connection costs one handshake per this
 * many requests) and drains the old one.
 */
const engineStreamsPerConnection = 500;

function engineCluster(plan: BootstrapPlan): Cluster {
  return {
    name: engineClusterName,
    // Containers (docker-compose) name the engine by its service name; a machine by address; a socket is a path.
    ...(plan.engine.socketPath !== undefined
      ? { type: 'STATIC' as const }
      : addressType(plan.engine.endpoints)),
    connect_timeout: '1s',
    // Each engine process is single-threaded: spread streams by how busy each one is.
    lb_policy: 'LEAST_REQUEST',
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        explicit_http_config: {
          http2_protocol_options: { connection_keepalive: { interval: '30s', timeout: '5s' } },
        },
        common_http_protocol_options: { max_requests_per_connection: engineStreamsPerConnection },
      },
    },
    // Every in-flight HTTP request holds one ext_proc stream; the default limit of 1024 would turn load into 500s.
    circuit_breakers: {
      thresholds: [{ max_connections: 10_000, max_pending_requests: 10_000, max_requests: 10_000 }],
    },
    // An engine that died (`up` restarts it) or is draining answers NOT_SERVING or nothing: its streams go to the
    // others until it is back, instead of every other request failing. The health check notices within a second
    // and lets it back at its first good answer; outlier detection reacts to the failed streams at once. With every
    // engine out, Envoy's panic routing still tries them all (a prompt 500 rather than a wait).
    health_checks: [
      {
        timeout: '0.5s',
        interval: '1s',
        no_traffic_interval: '1s',
        unhealthy_threshold: 1,
        healthy_threshold: 1,
        grpc_health_check: { service_name: 'envoy.service.ext_proc.v3.ExternalProcessor' },
      },
    ],
    outlier_detection: {
      split_external_local_origin_errors: true,
      consecutive_local_origin_failure: 3,
      interval: '1s',
      base_ejection_time: '1s',
      max_ejection_time: '5s',
      max_ejection_percent: 50,
    },
    load_assignment: {
      cluster_name: engineClusterName,
      endpoints: [
        {
          lb_endpoints:
            plan.engine.socketPath !== undefined
              ? [{ endpoint: { address: { pipe: { path: plan.engine.socketPath } } } }]
              : plan.engine.endpoints.map((endpoint) => ({ endpoint: { address: socketAddress(endpoint) } })),
        },
      ],
    },
  };
}

function serviceCluster(plan: BootstrapPlan): Cluster {
  return staticCluster(serviceClusterName, plan.service);
}

function dynamicCluster(tls: boolean): Cluster {
  return {
    name: dynamicClusterName(tls),
    connect_timeout: '2s',
    lb_policy: 'CLUSTER_PROVIDED',
    cluster_type: {
      name: 'envoy.clusters.dynamic_forward_proxy',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.clusters.dynamic_forward_proxy.v3.ClusterConfig',
        dns_cache_config: dnsCacheConfig,
      },
    },
    ...(tls
      ? {
          transport_socket: {
            name: 'envoy.transport_sockets.tls',
            typed_config: {
              '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
              common_tls_context: {
                validation_context: { trusted_ca: { filename: systemCaFile } },
              },
            },
          },
        }
      : {}),
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        // Envoy requires both of a dynamic forward proxy cluster once it has protocol options (inert without TLS).
        upstream_http_protocol_options: { auto_sni: true, auto_san_validation: true },
        common_http_protocol_options: { idle_timeout: backendIdleTimeout },
        explicit_http_config: { http_protocol_options: {} },
      },
    },
  };
}

/** STATIC for IP literals; STRICT_DNS (every address a name resolves to) when a host is a name. */
function addressType(
  endpoints: readonly Endpoint[],
):
  | { readonly type: 'STATIC' }
  | { readonly type: 'STRICT_DNS'; readonly dns_lookup_family: DnsLookupFamily } {
  return endpoints.every((endpoint) => isIpLiteral(endpoint.host))
    ? { type: 'STATIC' }
    : { type: 'STRICT_DNS', dns_lookup_family: 'V4_PREFERRED' };
}

export function staticCluster(name: string, endpoint: Endpoint): Cluster {
  return {
    name,
    ...addressType([endpoint]),
    connect_timeout: '2s',
    load_assignment: {
      cluster_name: name,
      endpoints: [{ lb_endpoints: [{ endpoint: { address: socketAddress(endpoint) } }] }],
    },
  };
}
