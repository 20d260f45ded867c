/**
 * The clusters of the named backends (API Management's backend entities): one per single backend, with the TLS
 * checks its entity asks for. A pool has no cluster of its own: the engine picks one of its members per request
 * (priority groups, weights, circuit breakers: engine/backend-pools.ts) and routes to that member's cluster, so each
 * member keeps its own connection pool, TLS settings and Envoy statistics.
 *
 * A pure function of the plan, producing Envoy cluster objects: the bootstrap carries them, and so can any other
 * delivery of clusters (xDS, watched files).
 */
import type { Cluster, UpstreamTransportSocket } from '../config-types.js';
import { backendClusterName } from '../contract.js';
import type { BackendPlan, BootstrapPlan, UpstreamTlsPlan } from './plan.js';
import { systemCaFile } from './tls.js';
import { urlCluster } from './url-cluster.js';
import { isIpLiteral } from './values.js';

/** A cluster for each single backend of the plan. */
export function backendEntityClusters(plan: BootstrapPlan): Cluster[] {
  return (plan.backends ?? []).flatMap((backend) =>
    backend.url === undefined ? [] : [backendCluster(backend, backend.url, plan.upstreamTls?.[backend.id])],
  );
}

function backendCluster(backend: BackendPlan, url: string, clientCertificate?: UpstreamTlsPlan): Cluster {
  const cluster = urlCluster(backendClusterName(backend.id), url, clientCertificate);
  const parsed = new URL(url);
  if (parsed.protocol !== 'https:') return cluster;
  return { ...cluster, transport_socket: validatedTls(backend, parsed, clientCertificate) };
}

/**
 * API Management's `tls.validateCertificateChain` / `validateCertificateName` (both on by default): the chain is
 * checked against the backend's trusted CA (the system store when none), the name against the URL's host (or the
 * client certificate entry's server name). With the chain unchecked nothing is: a name in a certificate no one
 * vouches for proves nothing, so Envoy's SAN match needs the chain.
 */
function validatedTls(
  backend: BackendPlan,
  url: URL,
  clientCertificate: UpstreamTlsPlan | undefined,
): UpstreamTransportSocket {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const serverName = clientCertificate?.serverName ?? host;
  const checkChain = backend.tls?.validateCertificateChain ?? true;
  const checkName = checkChain && (backend.tls?.validateCertificateName ?? true);
  const trustedCa = backend.tls?.trustedCa ?? clientCertificate?.trustedCaFile ?? systemCaFile;
  return {
    name: 'envoy.transport_sockets.tls' as const,
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext' as const,
      // SNI carries host names only; a backend addressed by IP gets none.
      ...(isIpLiteral(serverName) ? {} : { sni: serverName }),
      common_tls_context: {
        ...(clientCertificate
          ? {
              tls_certificates: [
                {
                  certificate_chain: { filename: clientCertificate.certificateFile },
                  private_key: { filename: clientCertificate.keyFile },
                },
              ],
            }
          : {}),
        ...(checkChain
          ? {
              validation_context: {
                trusted_ca: { filename: trustedCa },
                ...(checkName
                  ? {
                      match_typed_subject_alt_names: [
                        {
                          san_type: isIpLiteral(serverName) ? ('IP_ADDRESS' as const) : ('DNS' as const),
                          matcher: { exact: serverName },
                        },
                      ],
                    }
                  : {}),
              },
            }
          : {}),
      },
    },
  };
}
