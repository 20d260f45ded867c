import { access, mkdtemp, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { createService, type Service } from '../../../src/service/service.js';
import { type EchoBackend, startEchoBackend } from '../../doubles/echo-backend.js';

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
  // The loader refuses what spans sections; the service what it needs beyond the file.
  const error = await loadConfigFile(file)
    .then((loaded) => createService(loaded, options))
    .catch((e: unknown) => e);
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

describe('createService: state.dataDir, the embedded store', () => {
  it('needs the signing keys kept too, or tokens would stop verifying after a restart', async () => {
    const file = await configFile(
      'state-no-keys.yaml',
      `products: [{ id: courses }]\nstate: { dataDir: state }\n${AUTH}`,
    );
    expect(await failure(file)).toBe(
      `${file}:3:1: auth: state.dataDir keeps grants and refresh tokens across restarts, but the signing keys would be ` +
        'generated anew at each start (access tokens issued before a restart would stop verifying): set auth.dataDir ' +
        '(the keys are kept there as files) or auth.signingKeys.file',
    );
  });

  it('moves the clients of auth.dataDir into the store, which keeps them across a restart', async () => {
    const home = await mkdtemp(path.join(directory, 'durable-'));
    const start = async (withState: boolean) => {
      const file = path.join(home, 'gateway.yaml');
      await writeFile(
        file,
        `products: [{ id: courses }]\n${withState ? 'state: { dataDir: data/state }\n' : ''}` +
          `${AUTH}  dataDir: data/auth\n`,
      );
      const started = await createService(await loadConfigFile(file), { gatewayUrl: 'http://127.0.0.1:1' });
      const server = started.app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return {
        base,
        async stop() {
          server.closeAllConnections();
          await new Promise((resolve) => server.close(resolve));
          await started.close();
        },
      };
    };
    const readRegistration = (
      base: string,
      client: { client_id: string; registration_access_token: string },
    ) =>
      fetch(`${base}/v1/register/${client.client_id}`, {
        headers: { authorization: `Bearer ${client.registration_access_token}` },
      }).then((response) => response.status);
    const register = async (base: string) => {
      const response = await fetch(`${base}/v1/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          redirect_uris: ['http://127.0.0.1:9/cb'],
          token_endpoint_auth_method: 'none',
        }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as { client_id: string; registration_access_token: string };
    };

    // Before: registrations are a file of auth.dataDir.
    const before = await start(false);
    const early = await register(before.base);
    await before.stop();
    await access(path.join(home, 'data/auth/clients.json'));

    const first = await start(true);
    expect(await readRegistration(first.base, early)).toBe(200);
    const late = await register(first.base);
    await first.stop();
    // Imported once (a client deleted later does not come back), the store is relative to the configuration file.
    await access(path.join(home, 'data/auth/clients.json.imported'));
    await access(path.join(home, 'data/state/data.mdb'));

    const second = await start(true);
    try {
      expect(await readRegistration(second.base, early)).toBe(200);
      expect(await readRegistration(second.base, late)).toBe(200);
    } finally {
      await second.stop();
    }
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

describe('createService: reload', () => {
  let gateway: EchoBackend;
  let service: Service;
  let url: string;
  let file: string;
  let close: () => Promise<void>;

  const gatewayYaml = (extra: { apis?: string; products?: string; auth?: string; mcp?: string } = {}) =>
    `apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: list-courses, method: GET, urlTemplate: /api/Course }]
${extra.apis ?? ''}products:
  - { id: courses, apis: [courses] }
${extra.products ?? ''}${AUTH}${extra.auth ?? ''}mcp: { pageSize: ${extra.mcp ?? '100'} }
`;
  const withLabs = {
    apis: `  - id: labs
    urlSuffix: labs
    serviceUrl: http://127.0.0.1:1
    operations: [{ id: list-labs, method: GET, urlTemplate: /labs }]
`,
    products: '  - { id: labs, apis: [labs] }\n',
  };

  beforeAll(async () => {
    gateway = await startEchoBackend();
    file = await configFile('reload.yaml', gatewayYaml());
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

  /** An MCP session as a client holding `scope` has it: initialize, then JSON-RPC requests. */
  async function session(scope: string[]) {
    const token = await service.authorizationServer!.mintServiceToken({
      subject: 'alice',
      audience: service.mcpUrl!,
      scope,
    });
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const post = async (method: string, params: unknown) => {
      const response = await fetch(`${url}/v1/mcp`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      expect(response.status).toBe(200);
      return { response, body: (await response.json()) as { result: any } };
    };
    const init = await post('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
    });
    headers['mcp-session-id'] = init.response.headers.get('mcp-session-id')!;
    headers['mcp-protocol-version'] = '2025-06-18';
    return {
      headers,
      tools: async () =>
        ((await post('tools/list', {})).body.result.tools as { name: string }[]).map((tool) => tool.name),
      call: async (name: string) => (await post('tools/call', { name, arguments: {} })).body.result,
    };
  }

  const scopesSupported = async () =>
    (
      (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as {
        scopes_supported: string[];
      }
    ).scopes_supported;

  it('follows the products and APIs of the reloaded configuration; other settings wait for a restart', async () => {
    const client = await session(['read:courses-work', 'read:labs-work']);
    expect(await client.tools()).toEqual(['list-courses']);
    // The session's event stream, where the endpoint announces a changed tool list.
    const stream = await fetch(`${url}/v1/mcp`, {
      headers: { ...client.headers, accept: 'text/event-stream' },
    });
    expect(stream.status).toBe(200);
    const events = stream.body!.pipeThrough(new TextDecoderStream()).getReader();

    await writeFile(file, gatewayYaml({ ...withLabs, auth: '  accessTokenTtlSeconds: 600\n', mcp: '50' }));
    expect(await service.reload(await loadConfigFile(file))).toEqual({
      tools: 2,
      atNextStart: ['auth.accessTokenTtlSeconds', 'mcp.pageSize'],
    });
    let seen = '';
    while (!seen.includes('notifications/tools/list_changed')) seen += (await events.read()).value;
    await events.cancel();

    expect(await client.tools()).toEqual(['list-courses', 'list-labs']);
    expect(await scopesSupported()).toEqual([
      'read:courses-work',
      'write:courses-work',
      'read:labs-work',
      'write:labs-work',
    ]);
    expect((await client.call('list-labs')).isError).toBeFalsy();
    expect(gateway.received.at(-1)!.url).toBe('/labs/labs');
  });

  it('refuses a configuration it cannot serve, naming the place, and changes nothing', async () => {
    await writeFile(
      file,
      gatewayYaml({ products: '  - { id: _labs, apis: [labs] }\n', apis: withLabs.apis }),
    );
    const error = await loadConfigFile(file)
      .then((loaded) => service.reload(loaded))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(
      `${file}:12:7: products[1].id: must start with a letter or digit and have at most 63 characters to name a scope, got "_labs"`,
    );
    expect(service.mcp!.stats().tools).toBe(2);
    expect(await scopesSupported()).toContain('read:labs-work');
  });

  it('drops what the configuration no longer has', async () => {
    await writeFile(file, gatewayYaml());
    expect(await service.reload(await loadConfigFile(file))).toEqual({ tools: 1, atNextStart: [] });
    expect(await scopesSupported()).toEqual(['read:courses-work', 'write:courses-work']);
    const client = await session(['read:courses-work', 'read:labs-work']);
    expect(await client.tools()).toEqual(['list-courses']);
  });
});
