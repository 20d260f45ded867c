import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import { type McpUpstream, startLockedUpstream, startMcpUpstream } from '../doubles/mcp-upstream.js';
import { expectStepsStreamed } from '../processes/mcp-steps.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * Remote MCP servers (APIs of type mcp) behind Portcullis: two servers built with the official SDK's McpServer and one
 * that wants its own OAuth, aggregated into /v1/mcp; the official SDK client goes from nothing (401 → discovery → OAuth)
 * to tools of every server, through Envoy both ways (client → service, service → engine → upstream), so the MCP APIs'
 * policies run on every upstream message.
 */

const WEATHER_KEY = 'wk-5ecret-upstream-credential-7f3a';
const REDIRECT = 'http://127.0.0.1:47124/callback';

/**
 * The weather API's policy: the upstream credential from a secret named value (and the gateway's service token kept
 * from the third-party server), and at most two get_forecast calls per user a minute, keyed by the JSON-RPC body as
 * API Management's own MCP example reads it (context.Request.Body.As<…>(preserveContent: true)).
 */
const WEATHER_POLICY = `<policies>
  <inbound>
    <base />
    <set-variable name="tool" value='@{
      if (context.Request.Method != "POST") { return ""; }
      var rpc = context.Request.Body.As<JObject>(preserveContent: true);
      return (string)rpc["method"] == "tools/call" ? (string)rpc["params"]["name"] : "";
    }' />
    <choose>
      <when condition='@((string)context.Variables["tool"] == "get_forecast")'>
        <rate-limit-by-key calls="2" renewal-period="60"
          counter-key='@(context.Request.Headers.GetValueOrDefault("Authorization", "").Replace("Bearer ", "").AsJwt().Subject + "|get_forecast")' />
      </when>
    </choose>
    <set-header name="Authorization" exists-action="delete" />
    <set-header name="X-Api-Key" exists-action="override"><value>{{weather-key}}</value></set-header>
  </inbound>
  <backend><base /></backend>
  <outbound><base /></outbound>
  <on-error><base /></on-error>
</policies>`;

let stack: Stack;
/** Holds get_steps after its first step until the test has seen that step's notifications arrive. */
let openStepsGate = (): void => {};
const stepsGate = new Promise<void>((resolve) => {
  openStepsGate = resolve;
});
/** What the weather server's get_slow saw: started, and then cancelled (its request's signal aborted). */
const slow = { started: 0, cancelled: 0 };
let weather: McpUpstream;
let notes: McpUpstream;
let locked: Awaited<ReturnType<typeof startLockedUpstream>>;

beforeAll(async () => {
  weather = await startMcpUpstream('weather', (server) => {
    server.registerTool(
      'get_forecast',
      {
        description: 'Forecast for a city',
        inputSchema: { city: z.string() },
        annotations: { readOnlyHint: true },
      },
      ({ city }) => ({ content: [{ type: 'text', text: `sunny in ${city}` }] }),
    );
    server.registerTool(
      'set_alert',
      { description: 'Sets a weather alert', inputSchema: { city: z.string() } },
      ({ city }) => ({ content: [{ type: 'text', text: `alert set for ${city}` }] }),
    );
    server.registerTool(
      'get_slow',
      { description: 'Answers when cancelled', annotations: { readOnlyHint: true } },
      (extra) =>
        new Promise((resolve) => {
          slow.started += 1;
          extra.signal.addEventListener('abort', () => {
            slow.cancelled += 1;
            resolve({ content: [{ type: 'text', text: 'cancelled' }] });
          });
        }),
    );
    server.registerTool(
      'get_steps',
      {
        description: 'Reports progress and logs each step; the second waits for the test',
        inputSchema: { steps: z.number() },
        annotations: { readOnlyHint: true },
      },
      async ({ steps }, extra) => {
        for (let step = 1; step <= steps; step += 1) {
          if (step === 2) await stepsGate;
          const token = extra._meta?.progressToken;
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
            });
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'info', logger: 'steps', data: `step ${step} done` },
          });
        }
        return { content: [{ type: 'text', text: `${steps} steps` }] };
      },
    );
    server.registerTool(
      'admin_reset',
      { description: 'Not for agents', annotations: { readOnlyHint: true } },
      () => ({ content: [{ type: 'text', text: 'reset!' }] }),
    );
  });
  const saved: string[] = [];
  notes = await startMcpUpstream('notes', (server) => {
    server.registerTool('list_notes', { description: 'Lists the notes' }, () => ({
      content: [{ type: 'text', text: JSON.stringify(saved) }],
    }));
    server.registerTool(
      'add_note',
      { description: 'Adds a note', inputSchema: { text: z.string() } },
      ({ text }) => {
        saved.push(text);
        return { content: [{ type: 'text', text: `saved ${saved.length}` }] };
      },
    );
  });
  locked = await startLockedUpstream();
  stack = await startStack({
    apisYaml: `  - id: weather
    name: Weather
    type: mcp
    urlSuffix: weather
    serviceUrl: ${weather.url}
    mcp: { tools: ["get_*", set_alert, "added_*"] }
    policy: ${JSON.stringify(WEATHER_POLICY)}
  - id: notes
    name: Notes
    type: mcp
    urlSuffix: notes
    serviceUrl: ${notes.url}
    mcp: { toolPrefix: memo, writeTools: [add_note] }
  - id: locked
    name: Locked
    type: mcp
    urlSuffix: locked
    serviceUrl: ${locked.url}`,
    productsYaml: '  - { id: tools, apis: [weather, notes, locked] }',
    // The engine checks the MCP APIs' tokens with the AS's keys, which it reads from there.
    authYaml: '  dataDir: auth-data',
    namedValuesYaml: `namedValues:\n  weather-key: { value: ${WEATHER_KEY}, secret: true }`,
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await weather?.close();
  await notes?.close();
  await locked?.close();
});

async function connect(user: { username: string; password: string }, scope?: string, url = stack.mcpUrl) {
  const provider = new HeadlessProvider({
    user,
    clientName: 'MCP upstream e2e',
    redirectUrl: REDIRECT,
    issuer: stack.issuer,
    ...(scope ? { scope } : {}),
  });
  const first = new Client({ name: 'e2e', version: '1.0.0' });
  const firstTransport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
  await firstTransport.finishAuth(provider.code!);
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
  return { client, transport, provider };
}

/**
 * Every scope of the stack's products. The 401 challenge asks for the read scopes only (scope selection, MCP
 * 2025-11-25); a client that means to call write tools from the start asks for these itself.
 */
const EVERY_SCOPE = ['courses', 'grades', 'tools']
  .flatMap((p) => [`read:${p}-work`, `write:${p}-work`])
  .join(' ');

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('remote MCP servers aggregated into /v1/mcp', () => {
  it('discovery → OAuth → tools of every server → calls routed to each → list_changed relayed → session end closes upstream sessions', async () => {
    const { client, transport, provider } = await connect(USERS.alice, EVERY_SCOPE);
    expect(decodeJwt(provider.tokens()!.access_token).scope).toContain('write:tools-work');

    const names = (await client.listTools()).tools.map((tool) => tool.name);
    // The REST-API tools, and each server's exposed tools under its prefix (admin_reset is not exposed; the locked
    // server, which wants its own OAuth, lists nothing).
    expect(names).toEqual(
      expect.arrayContaining([
        'list-courses',
        'weather__get_forecast',
        'weather__set_alert',
        'memo__add_note',
        'memo__list_notes',
      ]),
    );
    expect(names.filter((name) => name.includes('__')).sort()).toEqual([
      'memo__add_note',
      'memo__list_notes',
      'weather__get_forecast',
      'weather__get_slow',
      'weather__get_steps',
      'weather__set_alert',
    ]);
    expect([...names].sort()).toEqual(names);

    expect(text(await client.callTool({ name: 'weather__get_forecast', arguments: { city: 'Oslo' } }))).toBe(
      'sunny in Oslo',
    );
    expect(text(await client.callTool({ name: 'memo__add_note', arguments: { text: 'hello' } }))).toBe(
      'saved 1',
    );
    expect(text(await client.callTool({ name: 'memo__list_notes', arguments: {} }))).toBe('["hello"]');
    expect(text(await client.callTool({ name: 'list-courses', arguments: {} }))).toContain('[');

    // One upstream session per server for this downstream session.
    expect(weather.opened).toHaveLength(1);
    expect(notes.opened).toHaveLength(1);

    // The credential came from the secret named value, through the API's policy; the gateway's token did not reach
    // the third-party server.
    const posts = weather.requests.filter((request) => request.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    for (const request of weather.requests) {
      expect(request.headers['x-api-key']).toBe(WEATHER_KEY);
      expect(request.headers.authorization).toBeUndefined();
    }
    // Nor did the service token reach the server without a policy: the engine checked it and kept it.
    for (const request of notes.requests) expect(request.headers.authorization).toBeUndefined();

    // A client's cancellation reaches the upstream call (the service cancels its own request there).
    const controller = new AbortController();
    const pending = client.callTool({ name: 'weather__get_slow', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    await until(() => slow.started === 1, 'the upstream tool to start', 10_000);
    controller.abort('enough');
    await expect(pending).rejects.toThrow();
    await until(() => slow.cancelled === 1, 'the upstream tool to see the cancellation', 10_000);

    // A tool added upstream: the server's list_changed reaches this client, and the new tool is listed.
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    weather.addTool('added_tool');
    await until(() => changed > 0, 'tools/list_changed relayed from the weather server', 10_000);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('weather__added_tool');
    expect(text(await client.callTool({ name: 'weather__added_tool', arguments: {} }))).toBe('added_tool');

    // Ending the downstream session ends its upstream sessions (DELETE through the gateway).
    await transport.terminateSession();
    await until(
      () => weather.closed.includes(weather.opened[0]!) && notes.closed.includes(notes.opened[0]!),
      'the upstream sessions to be ended',
      10_000,
    );
    await client.close();
    // The secret named value is in no log line.
    expect(stack.output()).not.toContain(WEATHER_KEY);
  }, 60_000);

  it("an upstream call's progress and log messages reach the client as they happen, under its own progress token", async () => {
    const { client } = await connect(USERS.alice);
    // The first step's notifications arrive while the upstream tool still waits: streamed, not buffered.
    await expectStepsStreamed(client, 'weather__get_steps', openStepsGate);
    // The client's level reached its upstream session (the server filters its own messages by it).
    expect(weather.requests.some((request) => request.rpc === 'logging/setLevel')).toBe(true);
    await client.close();
  }, 60_000);

  it("an upstream's log message outside a call (on its GET stream) reaches the client's GET stream", async () => {
    const { client } = await connect(USERS.alice);
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(notification.params.data);
    });
    expect(text(await client.callTool({ name: 'weather__get_forecast', arguments: { city: 'Oslo' } }))).toBe(
      'sunny in Oslo',
    );
    const session = weather.opened.at(-1)!;
    await until(
      () =>
        weather.requests.some(
          (request) => request.method === 'GET' && request.headers['mcp-session-id'] === session,
        ),
      "the upstream session's GET stream",
    );
    await weather.log(session, 'outside a call');
    await until(() => logs.length === 1, 'the log message at the client', 10_000);
    expect(logs).toEqual(['outside a call']);
    await client.close();
  }, 60_000);

  it('a tool the API does not expose is neither listed nor callable', async () => {
    const { client } = await connect(USERS.alice);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('weather__admin_reset');
    const refused = client.callTool({ name: 'weather__admin_reset', arguments: {} });
    await expect(refused).rejects.toBeInstanceOf(McpError);
    await expect(refused).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: weather__admin_reset'),
    });
    expect(weather.requests.some((request) => request.tool === 'admin_reset')).toBe(false);
    await client.close();
  }, 60_000);

  it('a per-tool rate-limit-by-key on the MCP API: the third call in a minute is a JSON-RPC error naming the server', async () => {
    const { client } = await connect(USERS.bob, EVERY_SCOPE);
    for (const city of ['Bergen', 'Tromsø'])
      expect(text(await client.callTool({ name: 'weather__get_forecast', arguments: { city } }))).toBe(
        `sunny in ${city}`,
      );
    const limited = client.callTool({ name: 'weather__get_forecast', arguments: { city: 'Narvik' } });
    await expect(limited).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('MCP server "Weather": too many requests (HTTP 429)'),
    });
    // Another tool of the same server is not limited.
    expect(text(await client.callTool({ name: 'weather__set_alert', arguments: { city: 'Narvik' } }))).toBe(
      'alert set for Narvik',
    );
    await client.close();
  }, 60_000);

  it('an upstream that asks for its own OAuth is a clear error, its challenge never relayed', async () => {
    const { client } = await connect(USERS.alice);
    const call = client.callTool({ name: 'locked__anything', arguments: {} });
    await expect(call).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining(
        'MCP server "Locked" asks for authorization the gateway does not have for it (HTTP 401)',
      ),
    });
    const error = (await call.catch((e: unknown) => e)) as McpError;
    expect(JSON.stringify({ message: error.message, data: error.data })).not.toMatch(
      /upstream-as\.example|upstream-secret-realm/,
    );
    await client.close();
  }, 60_000);

  it('write tools need write scope: a read-only token lists neither, and calling one after a listing is 403 insufficient_scope', async () => {
    const { client, transport, provider } = await connect(USERS.alice, 'read:tools-work');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names.filter((name) => name.includes('__'))).toEqual([
      'memo__list_notes',
      'weather__get_forecast',
      'weather__get_slow',
      'weather__get_steps',
    ]);
    // In the same session (its upstream sessions have read the tools), a write tool is 403 insufficient_scope with
    // the scope to step up to, as for a REST-API tool.
    const denied = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${provider.tokens()!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': transport.protocolVersion!,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'memo__add_note', arguments: { text: 'x' } },
      }),
    });
    expect(denied.status).toBe(403);
    expect(denied.headers.get('www-authenticate')).toContain(
      'error="insufficient_scope", error_description="This call requires scope write:tools-work"',
    );
    await denied.arrayBuffer();
    // Without the listing (a new session), the call is refused by the handler the same way as an unknown tool.
    const fresh = await connect(USERS.alice, 'read:tools-work');
    await expect(
      fresh.client.callTool({ name: 'memo__add_note', arguments: { text: 'x' } }),
    ).rejects.toMatchObject({
      code: -32602,
    });
    expect(
      notes.requests.some(
        (request) => request.rpc === 'tools/call' && JSON.stringify(request).includes('"x"'),
      ),
    ).toBe(false);
    await fresh.client.close();
    await client.close();
  }, 60_000);
});

describe('an MCP server API at its own URL, /<urlSuffix>/mcp, through Envoy and the engine', () => {
  it('401 → its own protected resource metadata → OAuth for that resource → the server itself; the client token never reaches it', async () => {
    const url = `${stack.gatewayUrl}/notes/mcp`;
    const unauthenticated = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(unauthenticated.status).toBe(401);
    const metadataUrl = `${stack.gatewayUrl}/.well-known/oauth-protected-resource/notes/mcp`;
    expect(unauthenticated.headers.get('www-authenticate')).toBe(
      `Bearer scope="read:tools-work write:tools-work", resource_metadata="${metadataUrl}"`,
    );
    await unauthenticated.arrayBuffer();
    expect(await (await fetch(metadataUrl)).json()).toEqual({
      resource: url,
      authorization_servers: [stack.issuer],
      scopes_supported: ['read:tools-work', 'write:tools-work'],
      bearer_methods_supported: ['header'],
      resource_name: 'Notes',
    });

    const requestsBefore = notes.requests.length;
    const { client, transport, provider } = await connect(USERS.alice, undefined, url);
    expect(decodeJwt(provider.tokens()!.access_token)).toMatchObject({ aud: url, sub: 'alice' });
    expect(provider.authorizationUrls[0]!.searchParams.get('resource')).toBe(url);
    // The server's own tools, unprefixed: this is the server, governed by the gateway.
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'add_note',
      'list_notes',
    ]);
    expect(text(await client.callTool({ name: 'add_note', arguments: { text: 'direct' } }))).toMatch(
      /^saved \d+$/,
    );
    const direct = notes.requests.slice(requestsBefore);
    expect(direct.length).toBeGreaterThan(0);
    for (const request of direct) expect(request.headers.authorization).toBeUndefined();

    // A token for /v1/mcp is not one for this server.
    const other = await connect(USERS.alice);
    const wrongAudience = await fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other.provider.tokens()!.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(wrongAudience.status).toBe(401);
    expect(wrongAudience.headers.get('www-authenticate')).toContain('error="invalid_token"');
    await wrongAudience.arrayBuffer();
    await other.client.close();
    await transport.terminateSession();
    await client.close();
  }, 60_000);

  it("the API's tool filter applies at its own URL too: a hidden tool is neither listed nor callable there", async () => {
    const url = `${stack.gatewayUrl}/weather/mcp`;
    const { client } = await connect(USERS.alice, undefined, url);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['get_forecast', 'get_slow', 'get_steps', 'set_alert']));
    expect(names).not.toContain('admin_reset');
    const refused = client.callTool({ name: 'admin_reset', arguments: {} });
    await expect(refused).rejects.toBeInstanceOf(McpError);
    await expect(refused).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: admin_reset'),
    });
    expect(weather.requests.some((request) => request.tool === 'admin_reset')).toBe(false);
    // The tools it shows are called as before.
    expect(text(await client.callTool({ name: 'set_alert', arguments: { city: 'Bodø' } }))).toBe(
      'alert set for Bodø',
    );
    expect(weather.requests.some((request) => request.tool === 'set_alert')).toBe(true);
    await client.close();
  }, 60_000);

  it('the write rule (mcp.writeTools) applies at its own URL too: a read-only token calling a write tool is 403 insufficient_scope with the step-up challenge', async () => {
    // The official SDK client with a read-only token from the authorization server, for each server's own URL.
    const post = (
      url: string,
      token: string,
      sessionId: string,
      version: string,
      name: string,
      args: object,
    ) =>
      fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
          'mcp-protocol-version': version,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name, arguments: args },
        }),
      });
    const cases = [
      // writeTools: [add_note] — by name.
      { api: 'notes', tool: 'add_note', args: { text: 'never-saved' }, upstream: notes, read: 'list_notes' },
      // writeTools: annotations — set_alert is not marked readOnlyHint, so it writes.
      {
        api: 'weather',
        tool: 'set_alert',
        args: { city: 'never-alerted' },
        upstream: weather,
        read: undefined,
      },
    ];
    for (const { api, tool, args, upstream, read } of cases) {
      const url = `${stack.gatewayUrl}/${api}/mcp`;
      const { client, transport, provider } = await connect(USERS.alice, 'read:tools-work', url);
      expect(decodeJwt(provider.tokens()!.access_token)).toMatchObject({
        aud: url,
        scope: 'read:tools-work',
      });
      // The listing stays whole at the own URL: the client sees what it can step up to.
      expect((await client.listTools()).tools.map((t) => t.name)).toContain(tool);
      if (read) expect(text(await client.callTool({ name: read, arguments: {} }))).toMatch(/^\[/);
      const callsBefore = upstream.requests.filter((r) => r.tool === tool).length;
      const denied = await post(
        url,
        provider.tokens()!.access_token,
        transport.sessionId!,
        transport.protocolVersion!,
        tool,
        args,
      );
      expect(denied.status).toBe(403);
      expect(denied.headers.get('www-authenticate')).toBe(
        'Bearer error="insufficient_scope", error_description="This call requires scope write:tools-work", ' +
          `scope="read:tools-work write:tools-work", resource_metadata="${stack.gatewayUrl}/.well-known/oauth-protected-resource/${api}/mcp"`,
      );
      expect(await denied.json()).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32000, message: 'Forbidden: the access token lacks scope write:tools-work' },
      });
      // Refused in the engine: the server never saw the call.
      expect(upstream.requests.filter((r) => r.tool === tool).length).toBe(callsBefore);
      await client.close();
    }
  }, 90_000);

  it("the API's policies run on direct traffic too: the per-tool rate limit of the weather server", async () => {
    const url = `${stack.gatewayUrl}/weather/mcp`;
    const { client } = await connect(USERS.bob, undefined, url);
    // Bob's two get_forecast calls of the minute went through /v1/mcp (the same policy, the same key): a third is 429.
    const limited = client.callTool({ name: 'get_forecast', arguments: { city: 'Alta' } });
    await expect(limited).rejects.toThrow(/429/);
    expect(text(await client.callTool({ name: 'set_alert', arguments: { city: 'Alta' } }))).toBe(
      'alert set for Alta',
    );
    await client.close();
  }, 60_000);
});
