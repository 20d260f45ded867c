import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapYaml } from '../../../src/config/envoy.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { planRuntime } from '../../../src/config/plan.js';
import { findEnvoy } from '../../../src/envoy/binary.js';
import { type CertificateWorkshop, certificateWorkshop } from '../../processes/certificates.js';
import { buildNetwork, layout, type Network } from '../../processes/netns.js';
import { until } from '../../processes/wait.js';

/**
 * Spec §4.3.1 and §4.3.7 across real network namespaces: a public client, the gateway with a public and a private
 * interface, a backend with only a private address behind its access sidecar, and a host inside the virtual
 * network. Envoy, the engine, the sidecar and the backend all run inside their namespaces; traffic never leaves
 * them.
 */

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = path.join(root, 'bin', 'portcullis.js');
const engineConfig = (mode: 'external' | 'internal', tls: { certificate: string; key: string }) => `
gateway: { http: { host: 0.0.0.0, port: 80 } }
admin: { host: 127.0.0.1, port: 9901 }
engine: { host: 127.0.0.1, ports: [50051], messageTimeoutMs: 2000 }
service: { host: 127.0.0.1, port: 3000 }
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: http://${layout.backendAddress}:80
    operations: [{ id: list, method: GET, urlTemplate: /api/Course }]
tls: { port: 443, certificate: ${tls.certificate}, key: ${tls.key} }
network:
  mode: ${mode}
  addressSpace: ${layout.addressSpace}
  subnets: { resources: ${layout.resourceSubnet}, gateway: ${layout.gatewaySubnet} }
  ${mode === 'external' ? `publicAddress: ${layout.publicAddress}` : ''}
  privateAddress: ${layout.privateAddress}
  inbound:
    - { name: allow-http, priority: 100, port: 80, source: ${mode === 'external' ? 'Internet' : 'VirtualNetwork'}, access: allow }
    - { name: allow-https, priority: 110, port: 443, source: ${mode === 'external' ? 'Internet' : 'VirtualNetwork'}, access: allow }
    - { name: allow-management, priority: 120, port: 3443, source: VirtualNetwork, access: allow }
  backends:
    - backend: courses
      listen: { host: ${layout.backendAddress}, port: 80 }
      target: { host: 127.0.0.1, port: 8081 }
`;

/** No HTTP answer: refused (7), timed out (28), closed without a reply (52) or reset (56). */
const NO_ANSWER = [7, 28, 52, 56];

function waitFor(what: string, probe: () => Promise<boolean>, log: () => string): Promise<void> {
  return until(probe, `${what} to come up`, { timeoutMs: 20_000, everyMs: 100, detail: log });
}

function collect(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return () => output;
}

describe('network placement across namespaces', () => {
  let net: Network;
  let workshop: CertificateWorkshop;
  let directory: string;
  let caFile: string;
  let gatewayEnvoy: ChildProcess | undefined;

  /** Writes the configuration for a mode, (re)starts the gateway's Envoy with its bootstrap, waits for it. */
  async function startGateway(mode: 'external' | 'internal', tls: { certificate: string; key: string }) {
    if (gatewayEnvoy) {
      const exited = new Promise((resolve) => gatewayEnvoy!.once('exit', resolve));
      gatewayEnvoy.kill('SIGTERM');
      await exited;
    }
    const file = path.join(directory, `${mode}.yaml`);
    await writeFile(file, engineConfig(mode, tls));
    const loaded = await loadConfigFile(file);
    const bootstrap = path.join(directory, `${mode}-envoy.yaml`);
    await writeFile(bootstrap, bootstrapYaml(await planRuntime(loaded.config, { directory })));
    gatewayEnvoy = net.spawn('gateway', findEnvoy(), [
      '-c',
      bootstrap,
      '--disable-hot-restart',
      '-l',
      'warning',
    ]);
    const log = collect(gatewayEnvoy);
    const probe = mode === 'external' ? layout.publicAddress : layout.privateAddress;
    const from = mode === 'external' ? 'client' : 'insider';
    await waitFor(
      `the ${mode} gateway`,
      async () => (await net.curl(from, `http://${probe}/courses/api/Course`)).status === 200,
      log,
    );
    return file;
  }

  beforeAll(async () => {
    net = await buildNetwork();
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-netns-'));
    workshop = await certificateWorkshop();
    const ca = await workshop.authority('ca', '/CN=Test CA');
    caFile = ca.certificateFile;
    const server = await ca.issue({
      name: 'gateway',
      subject: '/CN=gateway',
      ips: [layout.publicAddress, layout.privateAddress],
      usage: 'server',
    });
    const tls = { certificate: server.certificateFile, key: server.keyFile };

    const backend = net.spawn('backend', process.execPath, [
      path.join(root, 'test/integration/network/backend-server.mjs'),
      '127.0.0.1',
      '8081',
    ]);
    const backendLog = collect(backend);
    await waitFor('the backend', async () => backendLog().includes('listening'), backendLog);

    // The sidecar's bootstrap comes from the CLI, as an operator would make it.
    const file = path.join(directory, 'external.yaml');
    await writeFile(file, engineConfig('external', tls));
    const { stdout } = await net.exec('backend', process.execPath, [
      cli,
      'envoy-config',
      '--config',
      file,
      '--sidecar',
      'courses',
    ]);
    const sidecarFile = path.join(directory, 'sidecar.yaml');
    await writeFile(sidecarFile, stdout);
    const sidecar = net.spawn('backend', findEnvoy(), [
      '-c',
      sidecarFile,
      '--disable-hot-restart',
      '-l',
      'warning',
    ]);
    const sidecarLog = collect(sidecar);
    await waitFor(
      'the sidecar',
      async () => (await net.curl('backend', 'http://127.0.0.1:9902/ready')).body.includes('LIVE'),
      sidecarLog,
    );

    const engine = net.spawn('gateway', process.execPath, [
      cli,
      'engine',
      '--config',
      file,
      '--host',
      '127.0.0.1',
      '--port',
      '50051',
    ]);
    collect(engine);
    await startGateway('external', tls);
  }, 90_000);

  afterAll(async () => {
    await net?.remove();
    await workshop?.remove();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  async function sidecarDenied(): Promise<number> {
    const { body } = await net.curl('backend', 'http://127.0.0.1:9902/stats?filter=backend_access');
    return Number(/backend_access\.rbac\.denied: (\d+)/.exec(body)?.[1] ?? Number.NaN);
  }

  describe('external mode', () => {
    it('serves the public client on 80 and 443 of the public address, through the sidecar to the backend', async () => {
      const http = await net.curl('client', `http://${layout.publicAddress}/courses/api/Course`);
      expect(http.status).toBe(200);
      expect(JSON.parse(http.body)).toEqual({ backend: 'courses', path: '/api/Course' });
      const https = await net.curl('client', `https://${layout.publicAddress}/courses/api/Course`, [
        '--cacert',
        caFile,
      ]);
      expect(https.status).toBe(200);
      expect(JSON.parse(https.body)).toEqual({ backend: 'courses', path: '/api/Course' });
    });

    it('keeps the backend unreachable from the public client and the resource subnet, even by its address', async () => {
      const before = await sidecarDenied();
      const direct = await net.curl('client', `http://${layout.backendAddress}/api/Course`);
      expect(direct.status).toBe(0);
      expect(NO_ANSWER).toContain(direct.curlExit);
      const neighbour = await net.curl('insider', `http://${layout.backendAddress}/api/Course`);
      expect(neighbour.status).toBe(0);
      // Both were refused by the sidecar's rules (deny any, priority 300), not by a missing route.
      expect(await sidecarDenied()).toBe(before + 2);
    });

    it('opens the management port to the virtual network only', async () => {
      const fromInternet = await net.curl('client', `http://${layout.publicAddress}:3443/ready`);
      expect(fromInternet.status).toBe(0);
      expect(NO_ANSWER).toContain(fromInternet.curlExit);
      const fromVnet = await net.curl('insider', `http://${layout.privateAddress}:3443/ready`);
      expect(fromVnet.status).toBe(200);
      expect(fromVnet.body).toContain('LIVE');
      // Read-only: the admin interface's other paths are not served there.
      expect(
        (await net.curl('insider', `http://${layout.privateAddress}:3443/quitquitquit`, ['-X', 'POST']))
          .status,
      ).toBe(404);
    });
  });

  describe('internal mode', () => {
    beforeAll(async () => {
      await startGateway('internal', {
        certificate: path.join(workshop.directory, 'gateway.pem'),
        key: path.join(workshop.directory, 'gateway.key'),
      });
    }, 60_000);

    it('does not answer on the public address, and refuses the public client on the private one', async () => {
      const publicAddress = await net.curl('client', `http://${layout.publicAddress}/courses/api/Course`);
      expect(publicAddress.curlExit).toBe(7);
      const routedIn = await net.curl('client', `http://${layout.privateAddress}/courses/api/Course`);
      expect(routedIn.status).toBe(0);
      expect(NO_ANSWER).toContain(routedIn.curlExit);
    });

    it('serves a client inside the private network on 80 and 443', async () => {
      const http = await net.curl('insider', `http://${layout.privateAddress}/courses/api/Course`);
      expect(http.status).toBe(200);
      expect(JSON.parse(http.body)).toEqual({ backend: 'courses', path: '/api/Course' });
      const https = await net.curl('insider', `https://${layout.privateAddress}/courses/api/Course`, [
        '--cacert',
        caFile,
      ]);
      expect(https.status).toBe(200);
    });
  });
});
