import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freePort } from '../../src/config/plan.js';
import { type CertificateWorkshop, certificateWorkshop } from '../processes/certificates.js';
import { startUp, type UpRun } from '../processes/up.js';
import { until } from '../processes/wait.js';

/**
 * A backend entity's credentials under `portcullis up`, against real servers
 * (https://learn.microsoft.com/azure/api-management/backends, "Authorization credentials"): a client certificate
 * (`credentials.certificateIds`) presented by Envoy to a backend that refuses TLS without one from its CA, and a
 * managed identity (`credentials.managedIdentity`) whose token comes from the `identities` section's real
 * client-credentials source at a token endpoint the test runs, sent as `Authorization: Bearer …` and never logged;
 * and a backend's `tls.trustedCa` file, which up copies into its snapshot and watches.
 */
describe('backend credentials through up and Envoy', { timeout: 90_000 }, () => {
  let run: UpRun;
  let gatewayUrl: string;
  let directory: string;
  let workshop: CertificateWorkshop;
  let mtlsBackend: ReturnType<typeof createHttpsServer>;
  let tokenEndpoint: Server;
  let plainBackend: Server;
  const clientSecret = `client-secret-${randomBytes(8).toString('hex')}`;
  let caFile: string;
  let serverCaPem: string;
  /** Every token the endpoint issued, and the form it was asked with. */
  const issued: { token: string; form: URLSearchParams }[] = [];

  const listen = async (server: Server | ReturnType<typeof createHttpsServer>) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const bodyOf = async (request: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString();
  };

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-backend-credentials-'));
    workshop = await certificateWorkshop();
    const serverCa = await workshop.authority('server-ca', '/CN=Backend Server CA');
    const clientCa = await workshop.authority('client-ca', '/CN=Backend Client CA');
    const server = await serverCa.issue({
      name: 'backend',
      subject: '/CN=backend',
      ips: ['127.0.0.1'],
      usage: 'server',
    });
    const gatewayClient = await clientCa.issue({
      name: 'gateway-client',
      subject: '/CN=portcullis-gateway',
      usage: 'client',
    });

    // Refuses the TLS handshake without a certificate from clientCa; says whose certificate it got.
    mtlsBackend = createHttpsServer(
      { cert: server.pem, key: server.key, ca: clientCa.pem, requestCert: true, rejectUnauthorized: true },
      (request, response) => {
        const peer = (request.socket as TLSSocket).getPeerCertificate();
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ clientCertificate: peer.subject?.CN ?? null }));
      },
    );
    const mtlsPort = await listen(mtlsBackend);

    // An OAuth 2.0 token endpoint (client credentials, client_secret_basic): a new opaque token per request.
    tokenEndpoint = createServer(async (request, response) => {
      const form = new URLSearchParams(await bodyOf(request));
      const basic = Buffer.from(`${encodeURIComponent('gateway')}:${encodeURIComponent(clientSecret)}`);
      if (
        form.get('grant_type') !== 'client_credentials' ||
        request.headers.authorization !== `Basic ${basic.toString('base64')}`
      ) {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end('{"error":"invalid_client"}');
        return;
      }
      const token = `tok-${randomBytes(16).toString('hex')}`;
      issued.push({ token, form });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
    });
    const tokenPort = await listen(tokenEndpoint);

    plainBackend = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ authorization: request.headers.authorization ?? null }));
    });
    const plainPort = await listen(plainBackend);

    // The CA file of one backend starts wrong (the client CA, which did not sign the server's certificate).
    caFile = path.join(directory, 'partner-ca.pem');
    serverCaPem = serverCa.pem;
    await writeFile(caFile, clientCa.pem);

    const gatewayPort = await freePort();
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    await writeFile(
      path.join(directory, 'pick.xml'),
      `<policies>
  <inbound><base /><set-backend-service backend-id="@(context.Request.MatchedParameters[&quot;which&quot;])" /></inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /></on-error>
</policies>
`,
    );
    const config = {
      gateway: { http: { host: '127.0.0.1', port: gatewayPort } },
      admin: { host: '127.0.0.1', port: await freePort() },
      engine: { metricsPort: await freePort() },
      tls: {
        host: '127.0.0.1',
        port: await freePort(),
        certificates: {
          'gateway-client': { certificate: gatewayClient.certificateFile, key: gatewayClient.keyFile },
        },
      },
      identities: {
        sources: {
          idp: {
            type: 'client-credentials',
            tokenUrl: `http://127.0.0.1:${tokenPort}/oauth2/token`,
            clientId: 'gateway',
            clientSecret,
          },
        },
      },
      backends: [
        {
          id: 'with-certificate',
          url: `https://127.0.0.1:${mtlsPort}`,
          credentials: { certificateIds: ['gateway-client'] },
          tls: { trustedCa: serverCa.certificateFile },
        },
        {
          id: 'without-certificate',
          url: `https://127.0.0.1:${mtlsPort}`,
          tls: { trustedCa: serverCa.certificateFile },
        },
        {
          id: 'ca-watched',
          url: `https://127.0.0.1:${mtlsPort}`,
          credentials: { certificateIds: ['gateway-client'] },
          tls: { trustedCa: 'partner-ca.pem' },
        },
        {
          id: 'with-identity',
          url: `http://127.0.0.1:${plainPort}`,
          credentials: { managedIdentity: { resource: 'api://partner-backend' } },
        },
      ],
      apis: [
        {
          id: 'partner',
          urlSuffix: 'partner',
          serviceUrl: `http://127.0.0.1:${plainPort}`,
          policy: 'pick.xml',
          operations: [{ id: 'pick', method: 'GET', urlTemplate: '/{which}' }],
        },
      ],
    };
    const file = path.join(directory, 'gateway.yaml');
    await writeFile(file, stringify(config));
    run = startUp(file);
    await until(
      () =>
        fetch(`${gatewayUrl}/partner/with-identity`)
          .then((response) => response.status === 200)
          .catch(() => false),
      'the gateway to serve the partner API',
      { timeoutMs: 60_000, everyMs: 200, detail: () => run.output() },
    );
  });

  afterAll(async () => {
    await run?.stop(15_000);
    for (const server of [mtlsBackend, tokenEndpoint, plainBackend])
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await workshop?.remove();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('presents the client certificate named by credentials.certificateIds; without one the backend refuses TLS', async () => {
    const presented = await fetch(`${gatewayUrl}/partner/with-certificate`);
    expect(presented.status).toBe(200);
    expect(await presented.json()).toEqual({ clientCertificate: 'portcullis-gateway' });

    // The same backend, no credential: the handshake fails, and the gateway answers as for an unreachable backend.
    const refused = await fetch(`${gatewayUrl}/partner/without-certificate`);
    expect(refused.status).toBeGreaterThanOrEqual(500);
    expect(await refused.text()).not.toContain('clientCertificate');
  });

  it("sends a token of the identities' source for the managed identity's resource as a bearer, and never logs it", async () => {
    const answer = await fetch(`${gatewayUrl}/partner/with-identity`, {
      headers: { authorization: 'Bearer the-client-s-own' },
    });
    expect(answer.status).toBe(200);
    const { authorization } = (await answer.json()) as { authorization: string };
    // The token the endpoint issued to the gateway, for the resource the backend entity names (RFC 8707).
    const grant = issued.find(({ token }) => authorization === `Bearer ${token}`);
    expect(grant, `no issued token in ${authorization}`).toBeDefined();
    expect(grant!.form.get('resource')).toBe('api://partner-backend');

    // Cached until shortly before it expires: the next request carries the same token, with no new fetch.
    const fetched = issued.length;
    const again = (await (await fetch(`${gatewayUrl}/partner/with-identity`)).json()) as {
      authorization: string;
    };
    expect(again.authorization).toBe(authorization);
    expect(issued.length).toBe(fetched);

    // Every process's log (up shows them all), once the access lines of these requests are written.
    await until(
      () => (run.output().match(/\/partner\/with-identity/g) ?? []).length >= 2,
      "the engine's access lines",
      { timeoutMs: 5000, everyMs: 50, detail: () => run.output() },
    );
    for (const { token } of issued) expect(run.output()).not.toContain(token);
    expect(run.output()).not.toContain(clientSecret);
  });

  it("follows a backend's trusted CA file: up's copy is refused, the file fixed, the running Envoy trusts the new CA", async () => {
    const untrusted = await fetch(`${gatewayUrl}/partner/ca-watched`);
    expect(untrusted.status).toBeGreaterThanOrEqual(500);

    const from = run.output().length;
    await writeFile(caFile, serverCaPem);
    await until(
      async () => (await fetch(`${gatewayUrl}/partner/ca-watched`)).status === 200,
      'the changed CA file to reach Envoy',
      { timeoutMs: 20_000, everyMs: 200, detail: () => run.output().slice(from) },
    );
    // Requests may see the new CA before up's line saying so has crossed the pipes.
    await until(
      () => run.output().slice(from).includes('configuration reloaded (Envoy updated in place)'),
      "up's line for the reload",
      { timeoutMs: 10_000, everyMs: 50, detail: () => run.output().slice(from) },
    );
    expect(await (await fetch(`${gatewayUrl}/partner/ca-watched`)).json()).toEqual({
      clientCertificate: 'portcullis-gateway',
    });
  });
});
