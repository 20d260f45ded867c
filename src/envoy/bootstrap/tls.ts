/**
 * The TLS transport sockets: the gateway's own certificate on its https (and management) listeners, with client
 * certificates asked for when the plan says so; and TLS to an https backend, with the client certificate it is
 * given (authentication-certificate).
 */

import type { DownstreamTransportSocket, UpstreamTransportSocket } from '../config-types.js';
import type { DownstreamTlsPlan, UpstreamTlsPlan } from './plan.js';
import { isIpLiteral } from './values.js';

export const systemCaFile = '/etc/ssl/certs/ca-certificates.crt';

export function downstreamTls(tls: DownstreamTlsPlan): DownstreamTransportSocket {
  const clients = tls.clientCertificates;
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
      common_tls_context: {
        tls_certificates: [
          { certificate_chain: { filename: tls.certificateFile }, private_key: { filename: tls.keyFile } },
        ],
        alpn_protocols: ['h2', 'http/1.1'],
        // A validation context makes Envoy request a client certificate. Untrusted chains are let through so the
        // policy sees them and decides (validate-client-certificate's validate-trust), as API Management does.
        ...(clients
          ? {
              validation_context: {
                ...(clients.trustedCaFile ? { trusted_ca: { filename: clients.trustedCaFile } } : {}),
                trust_chain_verification: 'ACCEPT_UNTRUSTED',
              },
            }
          : {}),
      },
      ...(clients ? { require_client_certificate: clients.required } : {}),
    },
  };
}

/** TLS to an https backend: SNI, and with a client certificate the backend's own certificate checked too. */
export function backendTls(
  url: URL,
  host: string,
  clientCertificate?: UpstreamTlsPlan,
): UpstreamTransportSocket {
  if (!clientCertificate) {
    return {
      name: 'envoy.transport_sockets.tls',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
        sni: url.hostname,
      },
    };
  }
  const serverName = clientCertificate.serverName ?? host;
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext',
      // SNI carries host names only; a backend addressed by IP gets none, its certificate's IP SAN is checked.
      ...(isIpLiteral(serverName) ? {} : { sni: serverName }),
      common_tls_context: {
        tls_certificates: [
          {
            certificate_chain: { filename: clientCertificate.certificateFile },
            private_key: { filename: clientCertificate.keyFile },
          },
        ],
        // A backend that is given a client certificate is also checked: the certificate goes to it alone.
        validation_context: {
          trusted_ca: { filename: clientCertificate.trustedCaFile ?? systemCaFile },
          match_typed_subject_alt_names: [
            {
              san_type: isIpLiteral(serverName) ? 'IP_ADDRESS' : 'DNS',
              matcher: { exact: serverName },
            },
          ],
        },
      },
    },
  };
}
