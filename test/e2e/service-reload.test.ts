import { createHash, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageDriver } from '../doubles/stack-browser.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * The Koa service follows a running gateway's catalog: a product with a new API, added by editing the file `up`
 * watches, becomes scopes the AS advertises and accepts and a tool the MCP endpoint lists and calls — with no
 * restart, through the running Envoy, which takes the new route in place.
 */

const REDIRECT = 'http://127.0.0.1:47124/callback';

let stack: Stack;

beforeAll(async () => {
  stack = await startStack();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/**
 * Registration, the login and consent pages, PKCE and the code exchange, as a client asking for `scope` does.
 * Returns the access token, or the error the AS sent the browser back with.
 */
async function accessToken(scope: string): Promise<{ token?: string; error?: string | null }> {
  const registered = await fetch(`${stack.gatewayUrl}/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  expect(registered.status).toBe(201);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${stack.gatewayUrl}/v1/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope,
    state: 'reload',
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    resource: stack.mcpUrl,
  }).toString();
  const callback = await new PageDriver().authorize(authorize.href, USERS.alice);
  const code = callback.searchParams.get('code');
  if (!code) return { error: callback.searchParams.get('error') };
  const token = await fetch(`${stack.gatewayUrl}/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: clientId,
      code_verifier: verifier,
      resource: stack.mcpUrl,
    }),
  });
  expect(token.status).toBe(200);
  return { token: ((await token.json()) as { access_token: string }).access_token };
}

async function scopesSupported(): Promise<string[]> {
  const response = await fetch(`${stack.gatewayUrl}/.well-known/oauth-authorization-server`);
  return ((await response.json()) as { scopes_supported: string[] }).scopes_supported;
}

/** The official SDK client with a bearer token it was handed. */
async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'service-reload-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

describe('the service follows a configuration change without a restart', () => {
  it('a product with a new API: new scopes advertised and accepted, a new tool listed and callable', async () => {
    expect(await scopesSupported()).not.toContain('read:labs-work');
    expect(await accessToken('read:labs-work')).toEqual({ error: 'invalid_scope' });
    const before = await accessToken('read:courses-work read:grades-work');
    const earlier = await connect(before.token!);
    const toolsBefore = (await earlier.listTools()).tools.map((tool) => tool.name);
    expect(toolsBefore).not.toContain('list-experiments');
    await earlier.close();

    const text = await readFile(stack.configFile, 'utf8');
    await writeFile(
      stack.configFile,
      text.replace(
        '\nproducts:\n',
        `
  - id: labs
    urlSuffix: labs
    serviceUrl: ${stack.echo.url}
    operations:
      - { id: list-experiments, method: GET, urlTemplate: /experiments, displayName: List experiments }
products:
  - { id: labs, apis: [labs] }
`,
      ),
    );
    // `up` validates, hands the running Envoy the new route, reloads the engines, then the service.
    await until(
      () => /"process":"service".*"message":"configuration reloaded \(\d+ tools\)"/.test(stack.output()),
      'the service reload',
      { timeoutMs: 45_000, everyMs: 100, detail: () => stack.output() },
    );
    // The stack's five operations and the new one (the count is of every tool, not of one token's view).
    expect(stack.output()).toMatch(/"process":"service".*"message":"configuration reloaded \(6 tools\)"/);
    expect(stack.output()).not.toMatch(/"process":"service".*"message":"configuration refused/);

    expect(await scopesSupported()).toEqual(expect.arrayContaining(['read:labs-work', 'write:labs-work']));
    const after = await accessToken('read:courses-work read:labs-work');
    expect(after.token).toBeDefined();
    const client = await connect(after.token!);
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toContain('list-experiments');
    const result = await client.callTool({ name: 'list-experiments', arguments: {} });
    expect(result.isError).toBeFalsy();
    // Through Envoy's new route to the backend, with a gateway token for the new API.
    expect(stack.echo.received.at(-1)).toMatchObject({ method: 'GET', url: '/experiments' });
    await client.close();
  });
});
