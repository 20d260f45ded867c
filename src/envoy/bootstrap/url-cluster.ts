/** The cluster of one backend URL (an API's service URL, a named backend): its endpoint, connection pool and TLS. */
import type { Cluster } from '../config-types.js';
import type { UpstreamTlsPlan } from './plan.js';
import { backendTls } from './tls.js';
import { isIpLiteral, socketAddress } from './values.js';

/**
 * How long Envoy keeps an idle connection to a backend. Below the keep-alive of the servers backends commonly run on
 * (Node's 5 s, nginx's 75 s, Apache's 5 s): otherwise a request sent on a connection just as the backend closes it
 * for idleness is reset and the client gets a 502 (BackendConnectionFailure) for a request the backend never saw.
 */
export const backendIdleTimeout = '4s';

/** A cluster for one backend URL; its endpoint carries the host name so `auto_host_rewrite` sets Host to it. */
export function urlCluster(name: string, serviceUrl: string, clientCertificate?: UpstreamTlsPlan): Cluster {
  const url = new URL(serviceUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return {
    name,
    // A backend named by DNS is resolved by Envoy; an IP literal needs no resolver.
    type: isIpLiteral(host) ? 'STATIC' : 'STRICT_DNS',
    dns_lookup_family: 'V4_PREFERRED',
    connect_timeout: '2s',
    load_assignment: {
      cluster_name: name,
      endpoints: [
        { lb_endpoints: [{ endpoint: { address: socketAddress({ host, port }), hostname: url.host } }] },
      ],
    },
    typed_extension_protocol_options: {
      'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
        '@type': 'type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions',
        common_http_protocol_options: { idle_timeout: backendIdleTimeout },
        explicit_http_config: { http_protocol_options: {} },
      },
    },
    ...(url.protocol === 'https:' ? { transport_socket: backendTls(url, host, clientCertificate) } : {}),
  };
}
