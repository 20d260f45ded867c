import { writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../src/config/load.js';
import { freePort, planRuntime, withBoundPorts } from '../../../src/config/plan.js';
import { buildEngine } from '../../../src/engine/engine.js';
import { type ListeningExtProcServer, startExtProcServer } from '../../../src/extproc/server.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type CertificateWorkshop, certificateWorkshop, type Issued } from '../../processes/certificates.js';
import { type RunningEnvoy, startEnvoy } from '../../processes/envoy.js';

/**
 * The client certificate on the production path: the gateway configuration's `tls` section, the plan `up` makes,
 * the engine `portcullis engine` builds (trust store from `clientCertificates.trustedCa`), and a policy that
 * validates the certificate and reads it in an expression.
 */
describe('client certificates through the configured gateway', () => {
  let workshop: CertificateWorkshop;
  let ca: string;
  let client: Issued;
  let stranger: Issued;
  let backend: EchoBackend;
  let engine: ListeningExtProcServer;
  let envoy: RunningEnvoy;
  let httpsPort: number;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    const serverCa = await workshop.authority('server-ca', '/CN=Server CA');
    const clientCa = await workshop.authority('client-ca', '/CN=Client CA');
    ca = serverCa.pem;
    const server = await serverCa.issue({
      name: 'gateway',
      subject: '/CN=localhost',
      dns: ['localhost'],
      ips: ['127.0.0.1'],
      usage: 'server',
    });
    client = await clientCa.issue({
      name: 'client',
      subject: '/O=Example/CN=client.example',
      usage: 'client',
    });
    stranger = await workshop.selfSigned({
      name: 'stranger',
      subject: '/O=Example/CN=client.example',
      usage: 'client',
    });
    backend = await startEchoBackend();
    httpsPort = await freePort();
    const file = path.join(workshop.directory, 'gateway.yaml');
    await writeFile(
      file,
      `gateway: { http: { host: 127.0.0.1, port: ${await freePort()} } }
admin: { port: ${await freePort()} }
tls:
  host: 127.0.0.1
  port: ${httpsPort}
  certificate: ${server.certificateFile}
  key: ${server.keyFile}
  clientCertificates: { mode: optional, trustedCa: ${clientCa.certificateFile} }
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: ${backend.url}
    operations:
      - id: list
        method: GET
        urlTemplate: /api/Course
        policy: |
          <policies>
            <inbound>
              <base />
              <validate-client-certificate validate-revocation="false" validate-trust="true" validate-not-before="true" validate-not-after="true" ignore-error="false">
                <identities><identity common-name="client.example" /></identities>
              </validate-client-certificate>
              <set-header name="x-client" exists-action="override"><value>@(context.Request.Certificate.Subject + " " + context.Request.Certificate.Thumbprint.Length)</value></set-header>
            </inbound>
            <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
          </policies>
`,
    );
    const loaded = await loadConfigFile(file);
    const plan = await planRuntime(loaded.config, { directory: loaded.directory });
    // The engine binds the port the configuration leaves to the system, and Envoy is configured with it.
    const [endpoint] = plan.engine.endpoints;
    engine = await startExtProcServer(
      { exchanges: (await buildEngine(await loadConfigFile(file), { accessLog: false })).exchanges },
      endpoint!,
    );
    envoy = await startEnvoy(withBoundPorts(plan, { engines: [engine.port] }));
  }, 60_000);

  afterAll(async () => {
    await envoy?.stop();
    await engine?.shutdown(100);
    await backend?.close();
    await workshop?.remove();
  });

  const get = (cert?: Issued) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: '127.0.0.1',
          port: httpsPort,
          path: '/courses/api/Course',
          servername: 'localhost',
          ca,
          agent: false,
          ...(cert ? { cert: cert.pem, key: cert.key } : {}),
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
          );
        },
      );
      req.on('error', reject);
      req.end();
    });

  it('admits a trusted certificate whose identity matches, and the policy reads it as X509Certificate2', async () => {
    const answer = await get(client);
    expect(answer.status).toBe(200);
    expect(backend.received.at(-1)!.headers['x-client']).toBe('CN=client.example, O=Example 40');
  });

  it('refuses a request without a certificate, and an untrusted one with the same name', async () => {
    const before = backend.received.length;
    expect((await get()).status).toBe(403);
    expect((await get(stranger)).status).toBe(403);
    expect(backend.received.length).toBe(before);
  });
});
