import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  ProtocolError,
} from '@modelcontextprotocol/client';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../src/config/plan.js';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import {
  type McpUpstream,
  type ModernMcpUpstream,
  startMcpUpstream,
  startModernMcpUpstream,
} from '../doubles/mcp-upstream.js';
import { expectStepsStreamed } from '../processes/mcp-steps.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * Remote MCP servers of both protocol eras behind Portcullis, reached by clients of both eras: a server that speaks
 * only 2026-07-28 (the official TypeScript SDK v2's McpServer behind its createMcpHandler with `legacy: 'reject'`: no
 * initialize, no sessions), one that speaks only the session revisions (the SDK v1's McpServer), and one that is
 * down. The clients are the official SDK's: v1 (2025-11-25, sessions) and v2 pinned to 2026-07-28 (no session),
 * through /v1/mcp (aggregated) and, for the 2026-07-28 server, at its own URL.
 */

let stack: Stack;
let modern: ModernMcpUpstream;
let legacy: McpUpstream;
/** Holds count_steps after its first step until the test has seen that step's notifications arrive. */
let openStepsGate = (): void => {};
const stepsGate = new Promise<void>((resolve) => {
  openStepsGate = resolve;
});

/** What the 2026-07-28 server's get_slow saw: started, and then cancelled (its request's signal aborted). */
const slow = { started: 0, cancelled: 0 };

beforeAll(async () => {
  modern = await startModernMcpUpstream('modern', (server) => {
    server.registerTool(
      'get_time',
      {
        description: 'The time of day',
        inputSchema: z.object({ city: z.string() }),
        annotations: { readOnlyHint: true },
      },
      ({ city }) => ({ content: [{ type: 'text', text: `noon in ${city}` }] }),
    );
    server.registerTool(
      'count_steps',
      {
        description: 'Reports progress and logs each step; the second waits for the test',
        inputSchema: z.object({ steps: z.number() }),
        annotations: { readOnlyHint: true },
      },
      async ({ steps }, ctx) => {
        for (let step = 1; step <= steps; step += 1) {
          if (step === 2) await stepsGate;
          const token = ctx.mcpReq._meta?.progressToken;
          if (token !== undefined)
            await ctx.mcpReq.notify({
              method: 'notifications/progress',
              params: { progressToken: token, progress: step, total: steps, message: `step ${step}` },
            });
          await ctx.mcpReq.log('info', `step ${step} done`, 'steps');
        }
        return { content: [{ type: 'text', text: `${steps} steps` }] };
      },
    );
    server.registerTool(
      'get_slow',
      { description: 'Answers when cancelled', annotations: { readOnlyHint: true } },
      (ctx) =>
        new Promise((resolve) => {
          slow.started += 1;
          ctx.mcpReq.signal.addEventListener('abort', () => {
            slow.cancelled += 1;
            resolve({ content: [{ type: 'text', text: 'cancelled' }] });
          });
        }),
    );
    server.registerTool('hidden_tool', { annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: 'text', text: 'hidden' }],
    }));
  });
  legacy = await startMcpUpstream('legacy', (server) => {
    server.registerTool(
      'echo',
      { description: 'Echoes', inputSchema: { text: z.string() }, annotations: { readOnlyHint: true } },
      ({ text }) => ({ content: [{ type: 'text', text: `echo ${text}` }] }),
    );
  });
  // Nothing listens there: the server is down.
  const downPort = await freePort();
  stack = await startStack({
    apisYaml: `  - id: modern
    name: Modern
    type: mcp
    urlSuffix: modern
    serviceUrl: ${modern.url}/mcp
    mcp: { tools: ["get_*", "count_*", "added_*"] }
  - { id: legacy, name: Legacy, type: mcp, urlSuffix: legacy, serviceUrl: "${legacy.url}" }
  - { id: down, name: Down, type: mcp, urlSuffix: down, serviceUrl: "http://127.0.0.1:${downPort}/mcp" }`,
    productsYaml: '  - { id: tools, apis: [modern, legacy, down] }',
    authYaml: '  dataDir: auth-data',
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await modern?.close();
  await legacy?.close();
});

/** A token for `url` from the authorization server, the way the SDK v1 client gets one (401 → OAuth). */
async function signIn(url = stack.mcpUrl) {
  const provider = new HeadlessProvider({
    user: USERS.alice,
    clientName: 'MCP 2026 upstream e2e',
    issuer: stack.issuer,
    // A tool added later is not marked read-only, so it takes the write scope; the 401 challenge asks for the read
    // scopes only (scope selection), so the client asks for both itself.
    scope: 'read:tools-work write:tools-work',
  });
  const first = new Client({ name: 'e2e', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  await transport.finishAuth(provider.code!);
  return provider;
}

/** The SDK v1 client, session era (it negotiates 2025-11-25 through initialize). */
async function sessionClient(provider: HeadlessProvider, url = stack.mcpUrl) {
  const client = new Client({ name: 'e2e-v1', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
  return { client, transport };
}

/** The SDK v2 client pinned to 2026-07-28 (server/discover, no session), with the token in every request. */
async function statelessClient(token: string, url = stack.mcpUrl) {
  const client = new ModernClient(
    { name: 'e2e-v2', version: '2.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  const transport = new ModernTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;
const upstreamNames = (tools: { name: string }[]) =>
  tools
    .map((tool) => tool.name)
    .filter((name) => name.includes('__'))
    .sort();

describe('an upstream MCP server that speaks only 2026-07-28', () => {
  it('a session-era client (SDK v1) lists and calls its tools through /v1/mcp; progress, log messages, cancellation and list changes are relayed', async () => {
    const provider = await signIn();
    const { client, transport } = await sessionClient(provider);
    expect(transport.protocolVersion).toBe('2025-11-25');
    // Every reachable server's tools; the one that is down lists nothing (logged), the others stay usable.
    expect(upstreamNames((await client.listTools()).tools)).toEqual([
      'legacy__echo',
      'modern__count_steps',
      'modern__get_slow',
      'modern__get_time',
    ]);
    expect(text(await client.callTool({ name: 'modern__get_time', arguments: { city: 'Oslo' } }))).toBe(
      'noon in Oslo',
    );
    expect(text(await client.callTool({ name: 'legacy__echo', arguments: { text: 'hi' } }))).toBe('echo hi');

    // The upstream heard 2026-07-28 only: discovery, then every request with the revision, never initialize.
    const posts = modern.requests.filter((request) => request.method === 'POST');
    expect(posts.map((request) => request.rpc)).toContain('server/discover');
    expect(posts.map((request) => request.rpc)).not.toContain('initialize');
    for (const request of posts) expect(request.headers['mcp-protocol-version']).toBe('2026-07-28');
    // The client's token is not the upstream's (the engine removed it).
    for (const request of modern.requests) expect(request.headers.authorization).toBeUndefined();

    // Progress under the client's own token and log messages at the client's level, while the tool still waits.
    await expectStepsStreamed(client, 'modern__count_steps', openStepsGate);
    // 2026-07-28 has no logging/setLevel: the level went with the call.
    expect(modern.requests.some((request) => request.rpc === 'logging/setLevel')).toBe(false);

    // The client's cancellation reaches the upstream call (in 2026-07-28 the service's request to it is aborted).
    const controller = new AbortController();
    const cancelled = client.callTool({ name: 'modern__get_slow', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    await until(() => slow.started === 1, 'the upstream tool to start', 10_000);
    controller.abort('enough');
    await expect(cancelled).rejects.toThrow();
    await until(() => slow.cancelled === 1, 'the upstream tool to see the cancellation', 10_000);

    // The server's list change (on its subscriptions/listen stream) reaches this client on its session's stream.
    await until(
      () => modern.requests.some((request) => request.rpc === 'subscriptions/listen'),
      "the service's listen stream on the 2026-07-28 server",
      10_000,
    );
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    modern.addTool('added_tool');
    await until(() => changed > 0, 'tools/list_changed relayed from the 2026-07-28 server', 10_000);
    expect(upstreamNames((await client.listTools()).tools)).toContain('modern__added_tool');
    expect(text(await client.callTool({ name: 'modern__added_tool', arguments: {} }))).toBe('added_tool');

    await transport.terminateSession();
    await client.close();
  }, 60_000);

  it('a 2026-07-28 client (SDK v2) lists and calls the tools of both servers through /v1/mcp, with progress', async () => {
    const provider = await signIn();
    const client = await statelessClient(provider.tokens()!.access_token);
    expect(upstreamNames((await client.listTools()).tools)).toEqual([
      'legacy__echo',
      'modern__added_tool',
      'modern__count_steps',
      'modern__get_slow',
      'modern__get_time',
    ]);
    expect(text(await client.callTool({ name: 'modern__get_time', arguments: { city: 'Bergen' } }))).toBe(
      'noon in Bergen',
    );
    // A session-era server reached by a client that has no session: the gateway holds one upstream session for it.
    expect(text(await client.callTool({ name: 'legacy__echo', arguments: { text: 'there' } }))).toBe(
      'echo there',
    );
    const progress: unknown[] = [];
    const counted = await client.callTool(
      { name: 'modern__count_steps', arguments: { steps: 2 } },
      { onprogress: (update) => progress.push(update) },
    );
    expect(text(counted)).toBe('2 steps');
    expect(progress).toEqual([1, 2].map((step) => ({ progress: step, total: 2, message: `step ${step}` })));
    await client.close();
  }, 60_000);

  it('at its own URL a 2026-07-28 client reaches it through Envoy and the engine (the tool filter applies); a session-era client gets its refusal', async () => {
    const url = `${stack.gatewayUrl}/modern/mcp`;
    const provider = await signIn(url);
    const client = await statelessClient(provider.tokens()!.access_token, url);
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(names).toEqual(['added_tool', 'count_steps', 'get_slow', 'get_time']);
    expect(text(await client.callTool({ name: 'get_time', arguments: { city: 'Alta' } }))).toBe(
      'noon in Alta',
    );
    await client.close();

    // The own URL is the server itself, governed: no translation between eras there. A client that opens with
    // initialize gets the server's unsupported-version error.
    const sessionEra = new Client({ name: 'e2e-v1', version: '1.0.0' });
    const refused = sessionEra.connect(
      new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }),
    );
    await expect(refused).rejects.toThrow(/2026-07-28/);
    await sessionEra.close();
  }, 60_000);
});

describe('an upstream MCP server that is down', () => {
  it('a call of its tool is a JSON-RPC error naming it, for clients of either era', async () => {
    const provider = await signIn();
    const { client } = await sessionClient(provider);
    await expect(client.callTool({ name: 'down__anything', arguments: {} })).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('MCP server "Down"'),
    });
    await client.close();

    const stateless = await statelessClient(provider.tokens()!.access_token);
    const call = stateless.callTool({ name: 'down__anything', arguments: {} });
    await expect(call).rejects.toBeInstanceOf(ProtocolError);
    await expect(call).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('MCP server "Down"'),
    });
    await stateless.close();
  }, 60_000);
});
