import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';
import { type GatewayStack, startGateway } from '../../processes/gateway.js';
import { apiYaml, policy } from '../../processes/gateway-files.js';

/**
 * authentication-managed-identity through the real Envoy and engine: the default identity is a local server speaking
 * Azure's IMDS protocol; `client-id="gateway"` selects the `portcullis` source, which signs with the authorization
 * server's keys file. Failures obey ignore-error, else run on-error with API Management's 500.
 */
describe('authentication-managed-identity through Envoy', () => {
  let backend: EchoBackend;
  let imds: Server;
  let gateway: GatewayStack;
  let imdsCalls = 0;
  let publicKeys: ReturnType<typeof createLocalJWKSet>;

  beforeAll(async () => {
    imds = createServer((request, response) => {
      imdsCalls += 1;
      const url = new URL(request.url!, 'http://imds');
      const clientId = url.searchParams.get('client_id');
      if (request.headers.metadata !== 'true' || clientId === 'missing-identity') {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: 'invalid_request', error_description: 'Identity not found' }));
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          access_token: `imds:${url.searchParams.get('resource')}:${clientId ?? 'system'}`,
          expires_on: String(Math.floor(Date.now() / 1000) + 3600),
          token_type: 'Bearer',
        }),
      );
    });
    await new Promise<void>((resolve) => imds.listen(0, '127.0.0.1', resolve));
    const imdsUrl = `http://127.0.0.1:${(imds.address() as AddressInfo).port}`;
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const signing = { ...(await exportJWK(privateKey)), kid: 'as-key-1', alg: 'ES256' };
    publicKeys = createLocalJWKSet({
      keys: [{ ...(await exportJWK(publicKey)), kid: 'as-key-1', alg: 'ES256' }],
    });
    backend = await startEchoBackend();
    const op = (id: string, statements: string) => [id, 'GET', `/${id}`, `${id}.xml`, statements] as const;
    const operations = [
      op('header', '<authentication-managed-identity resource="https://vault.azure.net" />'),
      op(
        'variable',
        `<authentication-managed-identity resource="https://storage.azure.com/" client-id="user-assigned-7" output-token-variable-name="msi-access-token" ignore-error="false" />
    <set-header name="X-Token" exists-action="override"><value>@((string)context.Variables["msi-access-token"])</value></set-header>`,
      ),
      op(
        'own',
        '<authentication-managed-identity resource="https://orders.example/api" client-id="gateway" />',
      ),
      op(
        'fails',
        '<authentication-managed-identity resource="https://vault.azure.net" client-id="missing-identity" />',
      ),
      op(
        'ignored',
        '<authentication-managed-identity resource="https://vault.azure.net" client-id="missing-identity" ignore-error="true" />',
      ),
    ];
    const files: Record<string, string> = { 'keys.json': JSON.stringify({ keys: [signing] }) };
    for (const [id, , , file, statements] of operations) {
      files[file] = policy({
        inbound: statements,
        onError: `<set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
    <set-header name="X-Message" exists-action="override"><value>@(context.LastError.Message)</value></set-header>`,
      });
      void id;
    }
    gateway = await startGateway(
      `products: [{ id: shop }]
auth:
  issuer: https://auth.example.test
  baseUrl: http://127.0.0.1:1
  signingKeys: { file: keys.json }
identities:
  default: vm
  sources:
    vm: { type: azure-imds, protocol: imds, endpoint: "${imdsUrl}/metadata/identity/oauth2/token" }
    gateway: { type: portcullis, subject: orders-gateway }
apis:
${apiYaml(
  'orders',
  backend.url,
  operations.map(([id, method, template, file]) => [id, method, template, file]),
)}
`,
      files,
    );
  });

  afterAll(async () => {
    await gateway?.stop();
    await backend?.close();
    await new Promise((resolve) => imds?.close(resolve));
  });

  const call = (path: string) =>
    fetch(`${gateway.url}/orders/${path}`, { headers: { Authorization: 'Bearer client-token' } });

  it('replaces Authorization with the default identity token for the resource, fetched once', async () => {
    const before = imdsCalls;
    for (let i = 0; i < 3; i++) expect((await call('header')).status).toBe(200);
    expect(backend.received.at(-1)!.headers.authorization).toBe('Bearer imds:https://vault.azure.net:system');
    expect(imdsCalls - before).toBe(1);
  });

  it('puts the token of the user-assigned identity into the variable, leaving Authorization alone', async () => {
    expect((await call('variable')).status).toBe(200);
    const received = backend.received.at(-1)!;
    expect(received.headers['x-token']).toBe('imds:https://storage.azure.com/:user-assigned-7');
    expect(received.headers.authorization).toBe('Bearer client-token');
  });

  it('mints a gateway token with the authorization server keys when client-id names the portcullis source', async () => {
    expect((await call('own')).status).toBe(200);
    const token = backend.received.at(-1)!.headers.authorization!.replace(/^Bearer /, '');
    const { payload, protectedHeader } = await jwtVerify(token, publicKeys, {
      issuer: 'https://auth.example.test',
      audience: 'https://orders.example/api',
      typ: 'at+jwt',
    });
    expect(protectedHeader.kid).toBe('as-key-1');
    expect(payload).toMatchObject({ sub: 'orders-gateway', client_id: 'orders-gateway' });
  });

  it('runs on-error with a 500 when no token is obtained, saying why in LastError only', async () => {
    const before = backend.received.length;
    const response = await call('fails');
    expect(response.status).toBe(500);
    expect(response.headers.get('x-reason')).toBe('ManagedIdentityTokenNotAcquired');
    expect(response.headers.get('x-message')).toMatch(
      /^Obtaining managed identity token for client_id: missing-identity and resource: https:\/\/vault\.azure\.net failed: identity "vm": .* answered 400 invalid_request: Identity not found$/,
    );
    expect(await response.json()).toEqual({ statusCode: 500, message: 'Internal server error' });
    expect(backend.received.length).toBe(before);
  });

  it('goes on without a token when ignore-error is true', async () => {
    expect((await call('ignored')).status).toBe(200);
    expect(backend.received.at(-1)!.headers.authorization).toBe('Bearer client-token');
  });
});
