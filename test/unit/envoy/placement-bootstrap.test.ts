import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDevelopmentCertificate } from '../../../src/config/development-certificate.js';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime, planSidecar } from '../../../src/config/plan.js';
import { buildBootstrap } from '../../../src/envoy/bootstrap/bootstrap.js';
import { type Bootstrap, extensionNamed, type Listener } from '../../../src/envoy/config-types.js';
import { buildSidecarBootstrap } from '../../../src/envoy/sidecar.js';

const config = (mode: 'none' | 'external' | 'internal') =>
  parseConfig(
    `
gateway: { http: { host: 0.0.0.0, port: 80 } }
engine: { ports: [50051] }
service: { port: 3000 }
apis: [{ id: courses, urlSuffix: courses, serviceUrl: "https://10.0.0.4" }]
tls:
  port: 443
  certificate: tls/server.pem
  key: tls/server.key
  clientCertificates: { mode: required, trustedCa: tls/clients.pem }
  certificates: { partner: { certificate: tls/partner.pem, key: tls/partner.key } }
  backends: { courses: { certificateId: partner, serverName: courses.internal } }
network:
  mode: ${mode}
  addressSpace: 10.0.0.0/16
  subnets: { resources: 10.0.0.0/24, gateway: 10.0.1.0/24 }
  ${mode === 'external' ? 'publicAddress: 203.0.113.10' : ''}
  ${mode === 'none' ? '' : 'privateAddress: 10.0.1.4'}
  ${
    mode === 'none'
      ? ''
      : `inbound:
    - { name: web, priority: 100, port: 80, source: ${mode === 'external' ? 'Internet' : 'VirtualNetwork'}, access: allow }
    - { name: web-tls, priority: 105, port: 443, source: ${mode === 'external' ? 'Internet' : 'VirtualNetwork'}, access: allow }
    - { name: management, priority: 110, port: 3443, source: VirtualNetwork, access: allow }`
  }
  backends: [{ backend: courses, listen: { host: 10.0.0.4, port: 443 }, target: { host: 127.0.0.1, port: 8443 } }]
`,
    'gateway.yaml',
  );

const listenersOf = (bootstrap: Bootstrap) => bootstrap.static_resources.listeners;
const where = (listener: Listener) =>
  `${listener.name}@${listener.address.socket_address.address}:${listener.address.socket_address.port_value}`;

describe('listeners by placement', () => {
  it('mode none: the configured HTTP and HTTPS addresses, no access rules', async () => {
    const bootstrap = buildBootstrap(await planRuntime(config('none'), { directory: '/etc/portcullis' }));
    const listeners = listenersOf(bootstrap);
    expect(listeners.map(where)).toEqual(['gateway_http@0.0.0.0:80', 'gateway_https@0.0.0.0:443']);
    expect(listeners.flatMap((l) => l.filter_chains[0]!.filters.map((f) => f.name))).not.toContain(
      'envoy.filters.network.rbac',
    );
  });

  it('external: public listeners on the public and the private address, management beside them, rules on each', async () => {
    const plan = await planRuntime(config('external'), { directory: '/etc/portcullis' });
    expect(plan.gateway).toEqual({ host: '203.0.113.10', port: 80 });
    const listeners = listenersOf(buildBootstrap(plan));
    expect(listeners.map(where)).toEqual([
      'gateway_http_public@203.0.113.10:80',
      'gateway_http_private@10.0.1.4:80',
      'gateway_https_public@203.0.113.10:443',
      'gateway_https_private@10.0.1.4:443',
      'management_public@203.0.113.10:3443',
      'management_private@10.0.1.4:3443',
    ]);
    for (const listener of listeners)
      expect(listener.filter_chains[0]!.filters[0]!.name).toBe('envoy.filters.network.rbac');
    // Management: rule "management" (VirtualNetwork) first, then the group defaults, nothing for the Internet.
    const rbac = extensionNamed(
      listeners[4]!.filter_chains[0]!.filters,
      'envoy.filters.network.rbac',
    ).typed_config;
    expect(rbac.matcher.matcher_list.matchers.map((m) => m.on_match.action.name)).toEqual([
      '110_management',
      '65000_AllowVnetInBound',
      '65500_DenyAllInBound',
    ]);
  });

  it('internal: only the private address', async () => {
    const listeners = listenersOf(
      buildBootstrap(await planRuntime(config('internal'), { directory: '/etc/portcullis' })),
    );
    expect(listeners.map(where)).toEqual([
      'gateway_http_private@10.0.1.4:80',
      'gateway_https_private@10.0.1.4:443',
      'management_private@10.0.1.4:3443',
    ]);
  });

  it('TLS: files resolved against the configuration folder, mTLS requested, Envoy never rejects an untrusted chain', async () => {
    const listeners = listenersOf(
      buildBootstrap(await planRuntime(config('none'), { directory: '/etc/portcullis' })),
    );
    const tls = listeners[1]!.filter_chains[0]!.transport_socket!.typed_config;
    expect(tls.require_client_certificate).toBe(true);
    expect(tls.common_tls_context.tls_certificates).toEqual([
      {
        certificate_chain: { filename: '/etc/portcullis/tls/server.pem' },
        private_key: { filename: '/etc/portcullis/tls/server.key' },
      },
    ]);
    expect(tls.common_tls_context.validation_context).toEqual({
      trusted_ca: { filename: '/etc/portcullis/tls/clients.pem' },
      trust_chain_verification: 'ACCEPT_UNTRUSTED',
    });
    const hcm = extensionNamed(
      listeners[1]!.filter_chains[0]!.filters,
      'envoy.filters.network.http_connection_manager',
    ).typed_config;
    expect(hcm.forward_client_cert_details).toBe('SANITIZE');
  });

  it('gives the backend cluster its client certificate and checks the backend by the configured name', async () => {
    const bootstrap = buildBootstrap(await planRuntime(config('none'), { directory: '/etc/portcullis' }));
    const courses = bootstrap.static_resources.clusters.find((cluster) => cluster.name === 'api_courses')!
      .transport_socket!.typed_config;
    expect(courses.sni).toBe('courses.internal');
    expect(courses.common_tls_context?.tls_certificates).toEqual([
      {
        certificate_chain: { filename: '/etc/portcullis/tls/partner.pem' },
        private_key: { filename: '/etc/portcullis/tls/partner.key' },
      },
    ]);
    expect(courses.common_tls_context?.validation_context?.match_typed_subject_alt_names).toEqual([
      { san_type: 'DNS', matcher: { exact: 'courses.internal' } },
    ]);
  });
});

describe('the backend sidecar', () => {
  it('listens on the private address, applies the spec rules in priority order and proxies to the backend', () => {
    const sidecar = buildSidecarBootstrap(planSidecar(config('external'), 'courses'));
    const [listener] = listenersOf(sidecar);
    expect(where(listener!)).toBe('backend_courses@10.0.0.4:443');
    const filters = listener!.filter_chains[0]!.filters;
    expect(filters.map((filter) => filter.name)).toEqual([
      'envoy.filters.network.rbac',
      'envoy.filters.network.tcp_proxy',
    ]);
    const matchers = extensionNamed(filters, 'envoy.filters.network.rbac').typed_config.matcher.matcher_list
      .matchers;
    expect(
      matchers.map((m) => `${m.on_match.action.typed_config.name}:${m.on_match.action.typed_config.action}`),
    ).toEqual([
      '299_allow-gateway:ALLOW',
      '300_deny-any:DENY',
      '65000_AllowVnetInBound:ALLOW',
      '65500_DenyAllInBound:DENY',
    ]);
    expect(JSON.stringify(matchers[0]!.predicate)).toContain('"address_prefix":"10.0.1.0","prefix_len":24');
  });

  it('names the known sidecars when asked for another', () => {
    expect(() => planSidecar(config('external'), 'billing')).toThrow(
      'no sidecar for "billing" in network.backends (known: courses)',
    );
  });
});

describe('the development certificate', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'portcullis-devcert-'));
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('is made once for the host names, kept private, and reused while valid', async () => {
    const files = await ensureDevelopmentCertificate(folder, ['localhost', '127.0.0.1']);
    const certificate = new X509Certificate(await readFile(files.certificateFile));
    expect(certificate.checkHost('localhost')).toBe('localhost');
    expect(certificate.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect((await stat(files.keyFile)).mode & 0o777).toBe(0o600);
    const first = await readFile(files.certificateFile, 'utf8');
    const again = await ensureDevelopmentCertificate(folder, ['localhost']);
    expect(await readFile(again.certificateFile, 'utf8')).toBe(first);
    // A new host name, or a certificate close to its end, makes a new one.
    const renamed = await ensureDevelopmentCertificate(folder, ['gateway.test']);
    expect(new X509Certificate(await readFile(renamed.certificateFile)).checkHost('gateway.test')).toBe(
      'gateway.test',
    );
    const before = await readFile(renamed.certificateFile, 'utf8');
    const late = await ensureDevelopmentCertificate(
      folder,
      ['gateway.test'],
      new Date(Date.now() + 85 * 24 * 3600 * 1000),
    );
    expect(await readFile(late.certificateFile, 'utf8')).not.toBe(before);
  });
});
