import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';

/**
 * The named backends' Envoy clusters (src/envoy/bootstrap/backend-pools.ts): one per single backend with the TLS
 * checks of its entity (API Management's tls.validateCertificateChain / validateCertificateName, both on by
 * default) and the client certificate of its credentials.certificateIds; none for a pool.
 */
describe('backend entity clusters', () => {
  it('check TLS as each entity says, present its client certificate, and give a pool no cluster', async () => {
    const config = parseConfig(
      `tls:
  port: 443
  certificate: server.pem
  key: server.key
  certificates: { client: { certificate: client.pem, key: client.key } }
backends:
  - { id: checked, url: "https://checked.example" }
  - { id: chain-only, url: "https://chain.example", tls: { validateCertificateName: false, trustedCa: ca.pem } }
  - { id: unchecked, url: "https://127.0.0.1:8443", tls: { validateCertificateChain: false } }
  - { id: mutual, url: "https://mutual.example", credentials: { certificateIds: [client] } }
  - { id: plain, url: "http://127.0.0.1:8082" }
  - { id: pool, type: pool, pool: { services: [{ id: checked }, { id: plain }] } }
`,
      'gateway.yaml',
    );
    const bootstrap = buildBootstrap(await planRuntime(config, { directory: '/etc/portcullis' }));
    const clusters = new Map(
      bootstrap.static_resources.clusters
        .filter((cluster) => cluster.name.startsWith('backend_'))
        .map((cluster) => [cluster.name, cluster]),
    );
    expect([...clusters.keys()]).toEqual([
      'backend_checked',
      'backend_chain-only',
      'backend_unchecked',
      'backend_mutual',
      'backend_plain',
    ]);
    const tlsOf = (name: string) => clusters.get(name)!.transport_socket?.typed_config;
    expect(tlsOf('backend_checked')?.common_tls_context?.validation_context).toEqual({
      trusted_ca: { filename: expect.stringMatching(/\.(crt|pem)$/) },
      match_typed_subject_alt_names: [{ san_type: 'DNS', matcher: { exact: 'checked.example' } }],
    });
    expect(tlsOf('backend_chain-only')?.common_tls_context?.validation_context).toEqual({
      trusted_ca: { filename: '/etc/portcullis/ca.pem' },
    });
    expect(tlsOf('backend_unchecked')?.common_tls_context?.validation_context).toBeUndefined();
    expect(tlsOf('backend_mutual')?.common_tls_context?.tls_certificates).toEqual([
      {
        certificate_chain: { filename: '/etc/portcullis/client.pem' },
        private_key: { filename: '/etc/portcullis/client.key' },
      },
    ]);
    expect(clusters.get('backend_plain')!.transport_socket).toBeUndefined();
  });
});
