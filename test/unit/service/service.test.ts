import { mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../../src/config/load.js';
import { createService, type Service } from '../../../src/service/service.js';
import { type EchoBackend, startEchoBackend } from '../../helpers/backend.js';

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-service-'));
});

async function configFile(name: string, text: string): Promise<string> {
  const file = path.join(directory, name);
  await writeFile(file, text);
  return file;
}

async function failure(file: string, options = { gatewayUrl: 'http://127.0.0.1:1' }): Promise<string> {
  const error = await createService(await loadConfigFile(file), options).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  return (error as ConfigError).message;
}

const AUTH = `auth:
  issuer: http://127.0.0.1:8080
  baseUrl: http://127.0.0.1:8080
`;

describe('createService: problems that span sections, with file:line:col', () => {
  it('needs an auth section for the MCP endpoint', async () => {
    const file = await configFile('mcp-only.yaml', 'products: [{ id: courses }]\nmcp: { pageSize: 5 }\n');
    expect(await failure(file)).toBe(
      `${file}:2:1: mcp: the MCP endpoint needs an "auth" section (its tokens come from the authorization server)`,
    );
  });

  it('needs products (the scopes) and product ids that can name a scope', async () => {
    const none = await configFile('no-products.yaml', AUTH);
    expect(await failure(none)).toBe(
      `${none}:1:1: auth: scopes are read:<product>-work and write:<product>-work: add at least one entry to "products"`,
    );
    const odd = await configFile('odd-product.yaml', `products:\n  - { id: _private }\n${AUTH}`);
    expect(await failure(odd)).toBe(
      `${odd}:2:7: products[0].id: must start with a letter or digit and have at most 63 characters to name a scope, got "_private"`,
    );
  });

  it('needs the gateway URL to send tool calls through', async () => {
    const file = await configFile('ok.yaml', `products: [{ id: courses }]\n${AUTH}`);
    expect(await failure(file, {} as { gatewayUrl: string })).toBe(
      `${file}:2:1: auth: the service needs the gateway URL to send tool calls through (--gateway-url)`,
    );
  });

  it('reads the signing key file next to the configuration, and says what is wrong with it', async () => {
    const missing = await configFile(
      'missing-keys.yaml',
      `products: [{ id: c }]\n${AUTH}  signingKeys: { file: keys/none.json }\n`,
    );
    expect(await failure(missing)).toBe(
      `${missing}:5:18: auth.signingKeys.file: cannot read ${path.join(directory, 'keys/none.json')} as JSON (ENOENT)`,
    );
    const { publicKey } = await generateKeyPair('ES256', { extractable: true });
    await writeFile(
      path.join(directory, 'public.json'),
      JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' }] }),
    );
    const publicOnly = await configFile(
      'public-keys.yaml',
      `products: [{ id: c }]\n${AUTH}  signingKeys: { file: public.json }\n`,
    );
    expect(await failure(publicOnly)).toContain(
      'auth.signingKeys.file: ' +
        `${path.join(directory, 'public.json')}: keys[0] must be a private key with "kid" and "alg" (a public key cannot sign)`,
    );
  });
});

describe('createService: the composed service', () => {
  let gateway: EchoBackend;
  let service: Service;
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    // The echo backend plays Envoy's gateway listener: tool calls arrive there.
    gateway = await startEchoBackend();
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    await writeFile(
      path.join(directory, 'private.json'),
      JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'configured-key', alg: 'ES256' }] }),
    );
    const file = await configFile(
      'full.yaml',
      `apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: list-courses, method: GET, urlTemplate: /api/Course }]
products: [{ id: courses, apis: [courses] }]
${AUTH}  signingKeys: { file: private.json }
mcp: { gatewayUrl: "https://gateway.example.com" }
`,
    );
    service = await createService(await loadConfigFile(file), { gatewayUrl: gateway.url });
    const server = service.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await service.close();
    };
  });
  afterAll(async () => {
    await close?.();
    await gateway?.close();
  });

  it('serves health, the AS (with the configured key) and the MCP endpoint in one app', async () => {
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' });
    const jwks = (await (await fetch(`${url}/v1/jwks`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toEqual(['configured-key']);
    const metadata = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.scopes_supported).toEqual(['read:courses-work', 'write:courses-work']);
    expect(service.mcpUrl).toBe('http://127.0.0.1:8080/v1/mcp');
    const unauthenticated = await fetch(`${url}/v1/mcp`, { method: 'POST' });
    expect(unauthenticated.status).toBe(401);
  });

  it('calls a tool through the gateway URL with a service token for the configured public gateway audience', async () => {
    const as = service.authorizationServer!;
    const token = await as.mintServiceToken({
      subject: 'alice',
      audience: service.mcpUrl!,
      scope: ['read:courses-work'],
    });
    const post = (body: unknown, session?: string) =>
      fetch(`${url}/v1/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const session = init.headers.get('mcp-session-id')!;
    const call = await post(
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list-courses', arguments: {} } },
      session,
    );
    expect(call.status).toBe(200);
    const seen = gateway.received.at(-1)!;
    expect(seen.url).toBe('/courses/api/Course');
    const credential = String(seen.headers.authorization).replace(/^Bearer /, '');
    expect(credential).not.toBe(token);
    const keys = createLocalJWKSet((await (await fetch(`${url}/v1/jwks`)).json()) as { keys: [] });
    const { payload } = await jwtVerify(credential, keys, {
      issuer: 'http://127.0.0.1:8080',
      audience: 'https://gateway.example.com/courses',
    });
    expect(payload).toMatchObject({ sub: 'alice', scope: 'read:courses-work', client_id: 'portcullis-mcp' });
  });
});
