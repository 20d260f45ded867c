import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { bootstrapYaml } from '../../../src/config/envoy.js';
import { parseConfig } from '../../../src/config/load.js';
import { planRuntime, planSidecar } from '../../../src/config/plan.js';
import { findEnvoy } from '../../../src/envoy/binary.js';
import { buildSidecarBootstrap } from '../../../src/envoy/sidecar.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';

const run = promisify(execFile);

/** The real Envoy accepts what placement, TLS and the sidecar generate (`envoy --mode validate`). */
describe('generated placement bootstraps', () => {
  let workshop: CertificateWorkshop;
  let directory: string;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    const ca = await workshop.authority('ca', '/CN=CA');
    await ca.issue({ name: 'server', subject: '/CN=localhost', dns: ['localhost'], usage: 'server' });
    await ca.issue({ name: 'partner', subject: '/CN=partner', usage: 'client' });
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-validate-net-'));
  });
  afterAll(async () => {
    await workshop.remove();
    await rm(directory, { recursive: true, force: true });
  });

  async function validates(name: string, bootstrap: string): Promise<string> {
    const file = path.join(directory, name);
    await writeFile(file, bootstrap);
    const { stdout, stderr } = await run(findEnvoy(), [
      '--mode',
      'validate',
      '-c',
      file,
      '--disable-hot-restart',
      '-l',
      'error',
    ]);
    return stdout + stderr;
  }

  for (const mode of ['external', 'internal'] as const) {
    it(`accepts ${mode} mode with TLS, mTLS and a backend client certificate, and the sidecar`, async () => {
      const config = parseConfig(
        `
gateway: { http: { port: 80 } }
engine: { ports: [50051] }
service: { port: 3000 }
apis: [{ id: courses, urlSuffix: courses, serviceUrl: "https://courses.internal:8443" }]
tls:
  port: 443
  certificate: server.pem
  key: server.key
  clientCertificates: { mode: optional, trustedCa: ca.pem }
  certificates: { partner: { certificate: partner.pem, key: partner.key } }
  backends: { courses: { certificateId: partner, trustedCa: ca.pem } }
network:
  mode: ${mode}
  addressSpace: 10.0.0.0/16
  subnets: { resources: 10.0.0.0/24, gateway: 10.0.1.0/24 }
  ${mode === 'external' ? 'publicAddress: 203.0.113.10' : ''}
  privateAddress: 10.0.1.4
  inbound:
    - { name: http, priority: 100, port: 80, source: ${mode === 'external' ? 'Internet' : 'VirtualNetwork'}, access: allow }
    - { name: https, priority: 110, port: 443, source: ${mode === 'external' ? 'Internet' : 'VirtualNetwork'}, access: allow }
    - { name: management, priority: 120, port: 3443, source: 10.0.0.0/16, access: allow }
  backends: [{ backend: courses, listen: { host: 10.0.0.4, port: 8443 }, target: { host: courses-app, port: 8443 } }]
`,
        'gateway.yaml',
      );
      const plan = await planRuntime(config, { directory: workshop.directory });
      expect(await validates(`${mode}.yaml`, bootstrapYaml(plan))).toContain('OK');
      const sidecar = stringify(buildSidecarBootstrap(planSidecar(config, 'courses')));
      expect(await validates(`${mode}-sidecar.yaml`, sidecar)).toContain('OK');
    });
  }
});
