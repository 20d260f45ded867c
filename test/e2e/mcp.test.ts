import { randomUUID } from 'node:crypto';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * The official MCP SDK client against the stack as `portcullis up` runs it, every request through Envoy: from
 * nothing to tool calls (401 → protected resource metadata → AS metadata → registration → PKCE authorization
 * through the real pages → token → initialize → tools/list → tools/call), then past the access token's expiry
 * (refresh) — once per protocol revision the client speaks.
 */

const ACCESS_TOKEN_TTL = 3;
/** The verifier allows 5 s of clock skew, so a token is refused from exp + 5 s on: wait for that, with room. */
const EXPIRY_TIMEOUT_MS = (ACCESS_TOKEN_TTL + 5) * 1000 + 10_000;
const REDIRECT = 'http://127.0.0.1:47123/callback';
const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ accessTokenTtlSeconds: ACCESS_TOKEN_TTL });
});

afterAll(async () => {
  await stack?.stop();
});

/** The SDK's provider for alice, her callback checked against the stack's issuer; `scope` narrows the request. */
const headlessProvider = (scope?: string) =>
  new HeadlessProvider({
    user: USERS.alice,
    clientName: 'MCP SDK e2e',
    redirectUrl: REDIRECT,
    issuer: stack.issuer,
    ...(scope ? { scope } : {}),
  });

/** Every request the SDK makes, as `METHOD path -> status` (the body-less view the assertions need). */
function loggingFetch(log: string[]): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(input instanceof Request ? input.url : String(input));
    log.push(`${init?.method ?? 'GET'} ${url.pathname} -> ${response.status}`);
    return response;
  };
}

/**
 * The SDK client offers its latest revision in `initialize`; to pin it to an older one, the offered version is
 * rewritten (the server echoes a revision it serves and the client adopts it).
 */
class PinnedTransport extends StreamableHTTPClientTransport {
  constructor(
    url: URL,
    private readonly pinned: string,
    options: ConstructorParameters<typeof StreamableHTTPClientTransport>[1],
  ) {
    super(url, options);
  }
  override send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport['send']>[1]) {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      message = { ...message, params: { ...message.params, protocolVersion: this.pinned } } as JSONRPCMessage;
    }
    return super.send(message, options);
  }
}

/** From nothing to a connected client: the first connect ends in the authorization redirect, as in a real app. */
async function connectFromNothing(url: string, revision: string, provider: HeadlessProvider, log: string[]) {
  const options = { authProvider: provider, fetch: loggingFetch(log) };
  const first = new Client({ name: 'e2e', version: '1.0.0' });
  const firstTransport = new PinnedTransport(new URL(url), revision, options);
  await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.code).toBeDefined();
  await firstTransport.finishAuth(provider.code!);
  // A started transport cannot be restarted: connect again with a new one, now holding tokens.
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  const transport = new PinnedTransport(new URL(url), revision, options);
  await client.connect(transport);
  return { client, transport };
}

async function backendJson(path: string): Promise<unknown> {
  return (await fetch(`${stack.coursesBackendUrl}${path}`)).json();
}

describe('official MCP SDK client through Envoy, from nothing', () => {
  it.concurrent.each(REVISIONS)(
    'revision %s: 401 → discovery → registration → PKCE → token → tools, then refresh after expiry',
    async (revision) => {
      const provider = headlessProvider();
      const log: string[] = [];
      // The spec's documented form of the endpoint URL, with the trailing slash.
      const { client, transport } = await connectFromNothing(`${stack.mcpUrl}/`, revision, provider, log);
      expect(transport.protocolVersion).toBe(revision);
      expect(client.getServerVersion()).toMatchObject({ name: 'portcullis' });

      // The discovery and authorization sequence, exactly as the SDK performed it through Envoy.
      expect(log.slice(0, 4)).toEqual([
        'POST /v1/mcp/ -> 401',
        'GET /.well-known/oauth-protected-resource/v1/mcp -> 200',
        'GET /.well-known/oauth-authorization-server -> 200',
        'POST /v1/register -> 201',
      ]);
      expect(log).toContain('POST /v1/token -> 200');
      expect(log.slice(log.indexOf('POST /v1/token -> 200') + 1)[0]).toBe('POST /v1/mcp/ -> 200');
      const authorization = provider.authorizationUrls[0]!;
      expect(authorization.origin + authorization.pathname).toBe(`${stack.gatewayUrl}/v1/authorize`);
      expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
      expect(authorization.searchParams.get('resource')).toBe(stack.mcpUrl);
      expect(provider.driver.log.map((line) => line.split(' ')[0] + line.split(' ').at(-1))).toEqual([
        'GET200',
        'POST303',
        'GET200',
        'POST303',
      ]);
      const firstToken = provider.tokens()!;
      // The challenge asked for what initialize needs, the read scopes (MCP 2025-11-25 scope selection); a write
      // tool is a step up when it is called.
      expect(decodeJwt(firstToken.access_token)).toMatchObject({
        sub: 'alice',
        aud: stack.mcpUrl,
        scope: 'read:courses-work read:grades-work',
      });

      // The read tools: create-course needs write:courses-work, a step up (below).
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual([
        'echo-thing',
        'get-course',
        'list-courses',
        'list-grades',
      ]);
      expect(tools.find((tool) => tool.name === 'get-course')!.inputSchema).toMatchObject({
        type: 'object',
        properties: { id: { type: 'string' } },
        required: ['id'],
      });

      // GET /api/Course through the gateway: the result is the backend's JSON.
      const listed = await client.callTool({ name: 'list-courses', arguments: {} });
      expect(listed.isError).toBeUndefined();
      const courses = await backendJson('/api/Course');
      expect(JSON.parse((listed.content as { text: string }[])[0]!.text)).toEqual(courses);
      expect(listed.structuredContent).toEqual(revision >= '2025-06-18' ? { result: courses } : undefined);

      const one = await client.callTool({ name: 'get-course', arguments: { id: '2' } });
      expect(JSON.parse((one.content as { text: string }[])[0]!.text)).toEqual(
        await backendJson('/api/Course/2'),
      );

      // Let the access token expire: the next call gets 401, the SDK refreshes and the call goes on.
      await until(
        async () => {
          const probe = await fetch(stack.mcpUrl, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${firstToken.access_token}`,
              accept: 'application/json, text/event-stream',
              'content-type': 'application/json',
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 'expiry-probe', method: 'ping' }),
          });
          await probe.arrayBuffer();
          return probe.status === 401;
        },
        'the access token to expire',
        EXPIRY_TIMEOUT_MS,
      );
      const tokenRequestsBefore = log.filter((line) => line === 'POST /v1/token -> 200').length;
      const again = await client.callTool({ name: 'get-course', arguments: { id: '3' } });
      expect(JSON.parse((again.content as { text: string }[])[0]!.text)).toEqual(
        await backendJson('/api/Course/3'),
      );
      expect(log.filter((line) => line === 'POST /v1/token -> 200')).toHaveLength(tokenRequestsBefore + 1);
      expect(log).toContain('POST /v1/mcp/ -> 401');
      expect(provider.savedTokens).toHaveLength(2);
      const refreshed = provider.tokens()!;
      expect(refreshed.access_token).not.toBe(firstToken.access_token);
      expect(refreshed.refresh_token).not.toBe(firstToken.refresh_token);
      // Still one authorization: the refresh needed no user.
      expect(provider.authorizationUrls).toHaveLength(1);
      expect((await client.listTools()).tools).toHaveLength(4);

      await transport.terminateSession();
      await client.close();
    },
    60_000,
  );
});

describe('tool calls go through the gateway with the service credential', () => {
  it('sends the template, query and header arguments, and a token minted for the API instead of the user token', async () => {
    const provider = headlessProvider();
    const { client } = await connectFromNothing(stack.mcpUrl, '2025-11-25', provider, []);
    const marker = randomUUID();
    const result = await client.callTool({
      name: 'echo-thing',
      arguments: { name: `a b ${marker}`, verbose: true, 'X-Trace': 'trace-1' },
    });
    expect(result.isError).toBeUndefined();
    const seen = stack.echo.received.find((request) => request.url.includes(marker))!;
    expect(seen.method).toBe('GET');
    expect(seen.url).toBe(`/things/a%20b%20${marker}?verbose=true`);
    expect(seen.headers['x-trace']).toBe('trace-1');
    // What the echo backend saw is what the tool returned.
    expect((result.structuredContent as { url: string }).url).toBe(seen.url);

    const credential = String(seen.headers.authorization).replace(/^Bearer /, '');
    expect(credential).not.toBe(provider.tokens()!.access_token);
    const jwks = createRemoteJWKSet(new URL(`${stack.issuer}/v1/jwks`));
    const { payload, protectedHeader } = await jwtVerify(credential, jwks, {
      issuer: stack.issuer,
      audience: `${stack.gatewayUrl}/echo`,
      typ: 'at+jwt',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: 'alice', client_id: 'portcullis-mcp', scope: 'read:courses-work' });
    // mcp.serviceTokenTtlSeconds (60), capped by the AS at the access-token lifetime of this stack.
    expect(payload.exp! - payload.iat!).toBe(Math.min(60, ACCESS_TOKEN_TTL));
    await client.close();
  });

  it('creates a course with write scope: POST with the JSON body, answer from the backend', async () => {
    const provider = headlessProvider('read:courses-work write:courses-work');
    const { client } = await connectFromNothing(stack.mcpUrl, '2025-11-25', provider, []);
    const created = await client.callTool({
      name: 'create-course',
      arguments: { body: { title: 'Type Systems', credits: 4 } },
    });
    expect(created.isError).toBeUndefined();
    const course = created.structuredContent as { id: number; title: string; credits: number };
    expect(course).toMatchObject({ title: 'Type Systems', credits: 4 });
    expect(await backendJson(`/api/Course/${course.id}`)).toEqual(course);

    const invalid = await client.callTool({ name: 'create-course', arguments: { body: { title: 'x' } } });
    expect(invalid.isError).toBe(true);
    expect((invalid.content as { text: string }[])[0]!.text).toContain('missing required argument "credits"');
    await client.close();
  });
});

describe('scopes through Envoy', () => {
  it('lists only the tools the token grants; calling the others is 403 insufficient_scope', async () => {
    const provider = headlessProvider('read:courses-work');
    const { client } = await connectFromNothing(stack.mcpUrl, '2025-11-25', provider, []);
    expect(decodeJwt(provider.tokens()!.access_token).scope).toBe('read:courses-work');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['echo-thing', 'get-course', 'list-courses']);
    await client.close();

    const token = provider.tokens()!.access_token;
    const post = (body: unknown, session?: string) =>
      fetch(stack.mcpUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
        },
        body: JSON.stringify(body),
      });
    const initialized = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    expect(initialized.status).toBe(200);
    const session = initialized.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();

    const backendRequestsBefore = stack.echo.received.length;
    const cases = [
      {
        tool: 'create-course',
        needed: 'write:courses-work',
        arguments: { body: { title: 'x', credits: 1 } },
      },
      { tool: 'list-grades', needed: 'read:grades-work', arguments: {} },
    ];
    for (const [index, { tool, needed, arguments: args }] of cases.entries()) {
      const denied = await post(
        { jsonrpc: '2.0', id: 10 + index, method: 'tools/call', params: { name: tool, arguments: args } },
        session,
      );
      expect(denied.status).toBe(403);
      expect(denied.headers.get('www-authenticate')).toBe(
        `Bearer error="insufficient_scope", error_description="This call requires scope ${needed}", scope="read:courses-work ${needed}", resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource/v1/mcp"`,
      );
      expect(await denied.json()).toMatchObject({
        jsonrpc: '2.0',
        id: 10 + index,
        error: { code: expect.any(Number) },
      });
    }
    // Nothing reached a backend for the refused calls.
    expect(stack.echo.received.length).toBe(backendRequestsBefore);
    expect(await backendJson('/api/Course')).not.toContainEqual(expect.objectContaining({ title: 'x' }));
  });

  it('steps up: a write tool called with a read-only token is 403 insufficient_scope, and the SDK asks the user for the write scope', async () => {
    const provider = new HeadlessProvider({
      user: USERS.alice,
      clientName: 'MCP SDK step-up',
      redirectUrl: REDIRECT,
      issuer: stack.issuer,
      keepRefreshTokens: false,
    });
    const log: string[] = [];
    const { client, transport } = await connectFromNothing(stack.mcpUrl, '2025-11-25', provider, log);
    expect(decodeJwt(provider.tokens()!.access_token).scope).toBe('read:courses-work read:grades-work');
    expect(provider.authorizationUrls[0]!.searchParams.get('scope')).toBe(
      'read:courses-work read:grades-work',
    );

    const create = { name: 'create-course', arguments: { body: { title: 'Stepped up', credits: 2 } } };
    await expect(client.callTool(create)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(log).toContain('POST /v1/mcp -> 403');
    // The second authorization asks for the missing scope and keeps what the token had.
    const stepUp = provider.authorizationUrls[1]!;
    expect(stepUp.searchParams.get('scope')).toBe('read:courses-work read:grades-work write:courses-work');
    await transport.finishAuth(provider.code!);
    expect(decodeJwt(provider.tokens()!.access_token).scope).toBe(
      'read:courses-work read:grades-work write:courses-work',
    );
    const created = await client.callTool(create);
    expect(created.isError).toBeUndefined();
    expect(created.structuredContent).toMatchObject({ title: 'Stepped up', credits: 2 });
    await client.close();
  });

  it('answers 401 with the resource metadata challenge to a request without a token, through Envoy', async () => {
    const response = await fetch(`${stack.mcpUrl}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('server')).toBe('envoy');
    expect(response.headers.get('www-authenticate')).toBe(
      // What tools/list needs: the read scopes (not write:courses-work, MCP 2025-11-25 scope selection).
      `Bearer scope="read:courses-work read:grades-work", resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource/v1/mcp"`,
    );
  });
});
