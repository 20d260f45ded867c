import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../../src/config/plan.js';
import { clientCertificate, trustStore } from '../../../src/engine/client-certificate.js';
import type { BootstrapPlan } from '../../../src/envoy/bootstrap/plan.js';
import type { ExchangeFactory } from '../../../src/extproc/exchange.js';
import { firstHeader } from '../../../src/extproc/headers.js';
import { type ListeningExtProcServer, startExtProcServer } from '../../../src/extproc/server.js';
import { PipelineRun } from '../../../src/policy/runner.js';
import { fakeServices, pipelineOf, policies, request } from '../../doubles/policy-services.js';
import {
  type CertificateAuthority,
  type CertificateWorkshop,
  certificateWorkshop,
  type Issued,
} from '../../processes/certificates.js';
import { type RunningEnvoy, startEnvoy } from '../../processes/envoy.js';

/**
 * TLS and client certificates through a real Envoy: the engine side here is the production path in small — the
 * certificate comes from Envoy's ext_proc attributes (clientCertificate), and validate-client-certificate decides.
 */

const validation = pipelineOf(
  policies({
    inbound: `<validate-client-certificate>
        <identities><identity common-name="client.example" issuer-certificate-id="client-ca" /></identities>
      </validate-client-certificate>`,
  }),
);

interface Answer {
  status: number;
  body: string;
  peerCertificate?: string;
}

function get(
  port: number,
  path: string,
  tls: { ca: string; cert?: Issued; headers?: Record<string, string> },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        servername: 'localhost',
        ca: tls.ca,
        ...(tls.cert ? { cert: tls.cert.pem, key: tls.cert.key } : {}),
        headers: tls.headers,
        agent: false,
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
}

describe('TLS on the gateway, client certificates to policies, certificates to backends', () => {
  let workshop: CertificateWorkshop;
  let serverCa: CertificateAuthority;
  let clientCa: CertificateAuthority;
  let client: Issued;
  let stranger: Issued;
  let engine: ListeningExtProcServer;
  let envoy: RunningEnvoy;
  let httpsPort: number;
  let backend: ReturnType<typeof createHttpsServer>;
  let plan: BootstrapPlan;

  beforeAll(async () => {
    workshop = await certificateWorkshop();
    serverCa = await workshop.authority('server-ca', '/CN=Server CA');
    clientCa = await workshop.authority('client-ca', '/CN=Client CA');
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
    const gatewayClient = await clientCa.issue({
      name: 'gateway-client',
      subject: '/CN=gateway-client',
      usage: 'client',
    });
    const backendServer = await serverCa.issue({
      name: 'backend',
      subject: '/CN=backend',
      ips: ['127.0.0.1'],
      usage: 'server',
    });

    // A backend that requires a client certificate from clientCa and says whose it got.
    backend = createHttpsServer(
      {
        cert: backendServer.pem,
        key: backendServer.key,
        ca: clientCa.pem,
        requestCert: true,
        rejectUnauthorized: true,
      },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(JSON.stringify({ clientCertificate: peer.subject?.CN ?? null }));
      },
    );
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const backendPort = (backend.address() as AddressInfo).port;

    const trust = trustStore([{ pem: clientCa.pem, id: 'client-ca' }]);
    const exchanges: ExchangeFactory = () => ({
      async requestHeaders(head) {
        const path = firstHeader(head.headers, ':path') ?? '/';
        // Backend APIs go on untouched: Envoy presents the backend's client certificate.
        if (path.startsWith('/secure') || path.startsWith('/plain')) return { action: 'continue' };
        const certificate = clientCertificate(head.attributes, trust);
        const services = fakeServices();
        services.now = Date.now();
        const run = new PipelineRun(validation, request(), services);
        run.run.context.request.certificate = certificate;
        const outcome = await run.onRequest();
        return {
          action: 'respond',
          status: outcome.kind === 'respond' ? outcome.response.status : 200,
          body: JSON.stringify({
            subject: certificate?.subject ?? null,
            reason: run.context.lastError?.reason ?? null,
            xfcc: firstHeader(head.headers, 'x-forwarded-client-cert') ?? null,
          }),
        };
      },
    });
    engine = await startExtProcServer({ exchanges }, { host: '127.0.0.1', port: 0 });
    httpsPort = await freePort();
    const httpPort = await freePort();
    plan = {
      gateway: { host: '127.0.0.1', port: httpPort },
      listeners: [
        { name: 'gateway_http', role: 'http', address: { host: '127.0.0.1', port: httpPort } },
        { name: 'gateway_https', role: 'https', address: { host: '127.0.0.1', port: httpsPort } },
      ],
      tls: {
        certificateFile: server.certificateFile,
        keyFile: server.keyFile,
        clientCertificates: { required: false, trustedCaFile: clientCa.certificateFile },
      },
      upstreamTls: {
        secure: {
          certificateFile: gatewayClient.certificateFile,
          keyFile: gatewayClient.keyFile,
          trustedCaFile: serverCa.certificateFile,
        },
      },
      admin: { host: '127.0.0.1', port: await freePort() },
      engine: { endpoints: [{ host: '127.0.0.1', port: engine.port }], messageTimeoutMs: 2000 },
      service: { host: '127.0.0.1', port: await freePort() },
      apis: [
        // Answered by the engine itself (never forwarded): ext_proc runs on API routes only.
        { id: 'checked', urlSuffix: 'api', serviceUrl: 'http://127.0.0.1:9' },
        { id: 'secure', urlSuffix: 'secure', serviceUrl: `https://127.0.0.1:${backendPort}` },
        { id: 'plain', urlSuffix: 'plain', serviceUrl: `https://127.0.0.1:${backendPort}` },
      ],
    };
    envoy = await startEnvoy(plan);
  }, 60_000);

  afterAll(async () => {
    await envoy?.stop();
    await engine?.shutdown(100);
    await new Promise((resolve) => backend?.close(resolve));
    await workshop?.remove();
  });

  it('terminates TLS with the configured certificate and gives the policy the client certificate', async () => {
    const answer = await get(httpsPort, '/api/Course', { ca: serverCa.pem, cert: client });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({
      subject: 'CN=client.example, O=Example',
      reason: null,
      xfcc: null,
    });
  });

  it('refuses a request without a client certificate (optional mode lets the policy decide)', async () => {
    const answer = await get(httpsPort, '/api/Course', { ca: serverCa.pem });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ subject: null, reason: 'ClientCertificateMissing' });
  });

  it('lets an untrusted certificate through the handshake, and the policy refuses it', async () => {
    const answer = await get(httpsPort, '/api/Course', { ca: serverCa.pem, cert: stranger });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({
      subject: 'CN=client.example, O=Example',
      reason: 'ClientCertificateUntrusted',
    });
  });

  it('ignores a forged X-Forwarded-Client-Cert header: Envoy drops it and the certificate comes from TLS', async () => {
    const forged = `Hash=abc;Subject="CN=client.example,O=Example";Cert="${encodeURIComponent(client.pem)}"`;
    const answer = await get(httpsPort, '/api/Course', {
      ca: serverCa.pem,
      headers: { 'x-forwarded-client-cert': forged },
    });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({
      subject: null,
      reason: 'ClientCertificateMissing',
      xfcc: null,
    });
    const plain = await fetch(`http://127.0.0.1:${plan.gateway.port}/api/Course`, {
      headers: { 'x-forwarded-client-cert': forged },
    });
    expect(await plain.json()).toEqual({ subject: null, reason: 'ClientCertificateMissing', xfcc: null });
  });

  it('presents the configured client certificate to a backend that requires one (authentication-certificate)', async () => {
    const secure = await fetch(`http://127.0.0.1:${plan.gateway.port}/secure/`);
    expect(secure.status).toBe(200);
    expect(await secure.json()).toEqual({ clientCertificate: 'gateway-client' });
    // The same backend through an API without a configured certificate: its handshake fails, the client gets 502.
    const plain = await fetch(`http://127.0.0.1:${plan.gateway.port}/plain/`);
    expect(plain.status).toBe(502);
  });

  it('refuses the handshake without a client certificate when mTLS is required', async () => {
    const port = await freePort();
    const required = await startEnvoy({
      ...plan,
      listeners: [{ name: 'gateway_https', role: 'https', address: { host: '127.0.0.1', port } }],
      gateway: { host: '127.0.0.1', port: await freePort() },
      admin: { host: '127.0.0.1', port: await freePort() },
      tls: { ...plan.tls!, clientCertificates: { required: true, trustedCaFile: clientCa.certificateFile } },
    });
    try {
      await expect(get(port, '/api/Course', { ca: serverCa.pem })).rejects.toThrow();
      expect((await get(port, '/api/Course', { ca: serverCa.pem, cert: client })).status).toBe(200);
    } finally {
      await required.stop();
    }
  }, 30_000);
});
