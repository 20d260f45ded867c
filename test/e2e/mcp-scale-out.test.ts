import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { exportJWK, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/auth/index.js';
import { loadConfigFile } from '../../src/config/load.js';
import { freePort, planRuntime } from '../../src/config/plan.js';
import { buildBootstrap } from '../../src/envoy/bootstrap/bootstrap.js';
import { serviceClusterName } from '../../src/envoy/contract.js';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import { type McpUpstream, startMcpUpstream } from '../doubles/mcp-upstream.js';
import { type RunningChild, startChild } from '../processes/child.js';
import { type RunningEnvoy, startEnvoy } from '../processes/envoy.js';
import { type RunningRedis, startRedis } from '../processes/redis.js';
import { until } from '../processes/wait.js';

/**
 * Issue 19 item 5 (scale-out): two service processes (`portcullis service`, A and B) behind one real Envoy share
 * `state.redis`, and one official SDK client's requests alternate between them: a session opened on one serves
 * tools/call on the other, a GET stream cut on one resumes on the other with Last-Event-ID, a revoked grant is
 * refused by both, tools/list_changed reaches sessions on both, and one session's concurrent requests are bounded
 * over both. With an upstream MCP server (the official SDK's McpServer): its session is continued by either process, a
 * cancellation reaching the process that does not run the call cancels it upstream, a log message on its GET stream
 * reaches the client's stream on the other process, and when the process holding that upstream stream stops the other
 * opens it again. Two engine processes (`engine.ports`) share what a listing taught one of them (`readOnlyHint`).
 *
 * Envoy is the one `portcullis envoy-config` would generate for this configuration, with two changes made here: the
 * service cluster lists both processes (Envoy's default round robin then alternates between them; concurrency 1
 * makes that strict), and every response says which process answered (`x-served-by`, Envoy's
 * %UPSTREAM_REMOTE_ADDRESS%) so the test asserts where each request went instead of assuming it.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'bin', 'portcullis.js');
const alice = { username: 'alice', password: 'correct horse battery staple' };
const toolsChanged = 'notifications/tools/list_changed';

let redis: RunningRedis;
let directory: string;
let configFile: string;
let gatewayUrl: string;
/** Two engine processes (`engine.ports`), as two service processes: what one learns the other must know. */
let engines: RunningChild[];
let services: Record<'A' | 'B', RunningChild>;
let processOf: Map<string, 'A' | 'B'>;
let envoy: RunningEnvoy;
let slow: HeldBackend;
/** An MCP server (API of type mcp) whose tool counts the calls of its session: one count per upstream session. */
let notes: McpUpstream;
/** Calls of the notes server's `wait` tool running now, and those its client cancelled. */
const waiting: string[] = [];
const cancelled: string[] = [];

/** A backend whose answers wait until the test releases them: tool calls that stay running. */
interface HeldBackend {
  readonly url: string;
  readonly held: ServerResponse[];
  releaseAll(): void;
  close(): Promise<void>;
}

async function startHeldBackend(): Promise<HeldBackend> {
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => held.push(response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const releaseAll = () => {
    for (const response of held.splice(0)) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    }
  };
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    releaseAll,
    close: () =>
      new Promise<void>((resolve) => {
        releaseAll();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The configuration, with or without the `grades` API in the product (the change that lists tools anew). */
function gatewayYaml(ports: Record<string, number>, passwordHash: string, keys: string, withGrades: boolean) {
  return `gateway: { http: { host: 127.0.0.1, port: ${ports.gateway} } }
admin: { port: ${ports.admin} }
engine: { ports: [${ports.engine}, ${ports.engine2}] }
service: { port: ${ports.A} }
apis:
  - id: slow
    urlSuffix: slow
    serviceUrl: ${slow.url}
    operations:
      - { id: slow-thing, method: GET, urlTemplate: "/things/{name}" }
  - id: grades
    urlSuffix: grades
    serviceUrl: ${slow.url}
    operations:
      - { id: list-grades, method: GET, urlTemplate: /grades }
  - id: notes
    name: Notes
    type: mcp
    urlSuffix: notes
    serviceUrl: ${notes.url}
products:
  - { id: courses, apis: [${withGrades ? 'slow, grades, notes' : 'slow, notes'}] }
auth:
  issuer: ${gatewayUrl}
  baseUrl: ${gatewayUrl}
  cookieSecure: false
  signingKeys: { file: ${JSON.stringify(keys)} }
  users:
    - { username: alice, passwordHash: "${passwordHash}" }
mcp: { maxConcurrentRequestsPerSession: 2 }
state:
  redis: { url: ${redis.url}, keyPrefix: "scale-out:" }
`;
}

/** Adds `x-served-by` to every response of every route configuration in the bootstrap. */
function markUpstream(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) markUpstream(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Record<string, unknown>;
  if (object.virtual_hosts !== undefined) {
    object.response_headers_to_add = [
      {
        header: { key: 'x-served-by', value: '%UPSTREAM_REMOTE_ADDRESS%' },
        append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
      },
    ];
  }
  for (const value of Object.values(object)) markUpstream(value);
}

beforeAll(async () => {
  redis = await startRedis();
  slow = await startHeldBackend();
  notes = await startMcpUpstream('notes', (server) => {
    let calls = 0;
    server.registerTool(
      'count',
      { description: 'Counts its calls', annotations: { readOnlyHint: true } },
      () => {
        calls += 1;
        return { content: [{ type: 'text', text: String(calls) }] };
      },
    );
    // Runs until its client cancels it (or 20 s pass: a test that fails never leaves it running).
    server.registerTool(
      'wait',
      { description: 'Waits to be cancelled', annotations: { readOnlyHint: true } },
      (extra) =>
        new Promise((resolve) => {
          const id = String(extra.requestId);
          waiting.push(id);
          const done = setTimeout(
            () => resolve({ content: [{ type: 'text', text: 'not cancelled' }] }),
            20_000,
          );
          extra.signal.addEventListener('abort', () => {
            clearTimeout(done);
            cancelled.push(id);
            resolve({ content: [{ type: 'text', text: 'cancelled' }] });
          });
        }),
    );
  });
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-scale-out-'));
  const ports = {
    gateway: await freePort(),
    admin: await freePort(),
    engine: await freePort(),
    engine2: await freePort(),
    A: await freePort(),
    B: await freePort(),
  };
  gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const keys = path.join(directory, 'keys.json');
  await writeFile(
    keys,
    JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'scale-1', alg: 'ES256' }] }),
  );
  configFile = path.join(directory, 'gateway.yaml');
  const passwordHash = await hashPassword(alice.password);
  await writeFile(configFile, gatewayYaml(ports, passwordHash, keys, false));
  // The next change of the tool list, ready to be written: grades joins the product.
  await writeFile(`${configFile}.grades`, gatewayYaml(ports, passwordHash, keys, true));

  engines = await Promise.all(
    [ports.engine, ports.engine2].map((port) =>
      startChild(process.execPath, [cli, 'engine', '--config', configFile, '--port', String(port)], {
        what: `the engine on ${port}`,
        ready: (output) => output.includes('engine listening on'),
      }),
    ),
  );
  const service = (name: 'A' | 'B') =>
    startChild(
      process.execPath,
      [cli, 'service', '--config', configFile, '--port', String(ports[name]), '--gateway-url', gatewayUrl],
      { what: `service ${name}`, ready: (output) => output.includes('service listening on') },
    );
  services = { A: await service('A'), B: await service('B') };
  processOf = new Map([
    [`127.0.0.1:${ports.A}`, 'A'],
    [`127.0.0.1:${ports.B}`, 'B'],
  ]);

  const { config } = await loadConfigFile(configFile);
  const plan = await planRuntime(config, { directory });
  const bootstrap = JSON.parse(JSON.stringify(buildBootstrap(plan))) as {
    static_resources: {
      clusters: { name: string; load_assignment: { endpoints: { lb_endpoints: unknown[] }[] } }[];
    };
  };
  const cluster = bootstrap.static_resources.clusters.find((c) => c.name === serviceClusterName)!;
  cluster.load_assignment.endpoints = [
    {
      lb_endpoints: [ports.A, ports.B].map((port) => ({
        endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: port } } },
      })),
    },
  ];
  markUpstream(bootstrap);
  envoy = await startEnvoy(plan, bootstrap as unknown as Record<string, unknown>);
  await until(
    async () =>
      (await envoy.stats('portcullis_engine.membership_healthy')).get(
        'cluster.portcullis_engine.membership_healthy',
      ) === 2,
    'Envoy to find both engines healthy',
    { timeoutMs: 10_000, detail: () => envoy.log() },
  );
}, 120_000);

afterAll(async () => {
  // The SDK clients first: an open client reconnects its GET stream while the rest stops.
  for (const client of clients) await client.close();
  await envoy?.stop();
  await services?.A.stop();
  await services?.B.stop();
  for (const engine of engines ?? []) await engine.stop();
  await slow?.close();
  await notes?.close();
  await redis?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** One request as it went through Envoy: what it was, for which session, and which process answered. */
interface Served {
  readonly client: string;
  readonly httpMethod: string;
  readonly rpc: string | undefined;
  readonly session: string | undefined;
  readonly lastEventId: string | undefined;
  readonly by: 'A' | 'B' | undefined;
  readonly status: number;
}
const served: Served[] = [];
const clients: Client[] = [];

/** The process that answered the last request sent to the service cluster. */
const lastServedBy = () => served.filter((entry) => entry.by !== undefined).at(-1)!.by!;
const other = (name: 'A' | 'B') => (name === 'A' ? 'B' : 'A');

interface Connected {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  readonly provider: HeadlessProvider;
  readonly session: () => string;
  readonly changes: string[];
  /** The data of each `notifications/message` the client got. */
  readonly messages: unknown[];
  /** Cuts the open GET stream as a network failure would; the SDK reconnects with Last-Event-ID. */
  dropGetStream(): void;
  /** Holds the next GET (the reconnect) until the returned function is called. */
  holdNextGet(): () => void;
}

/** The official SDK client, signed in through the real login and consent pages, every request recorded. */
async function connect(name: string): Promise<Connected> {
  const provider = new HeadlessProvider({ user: alice, clientName: `scale-out ${name}` });
  let cutGet: (() => void) | undefined;
  let gate: Promise<void> | undefined;
  const recordingFetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const httpMethod = init?.method ?? 'GET';
    if (httpMethod === 'GET' && gate && String(url).endsWith('/v1/mcp')) {
      const waiting = gate;
      gate = undefined;
      await waiting;
    }
    const response = await fetch(url, init);
    let rpc: string | undefined;
    if (typeof init?.body === 'string' && init.body.startsWith('{')) rpc = JSON.parse(init.body).method;
    const by = processOf.get(response.headers.get('x-served-by') ?? '');
    served.push({
      client: name,
      httpMethod,
      rpc,
      session: headers.get('mcp-session-id') ?? response.headers.get('mcp-session-id') ?? undefined,
      lastEventId: headers.get('last-event-id') ?? undefined,
      by,
      status: response.status,
    });
    if (httpMethod !== 'GET' || !response.body || response.status !== 200) return response;
    // The GET stream, passed through a stream the test can cut.
    const upstream = response.body.getReader();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        controller = c;
      },
      pull: async (c) => {
        const { value, done } = await upstream.read().catch(() => ({ value: undefined, done: true }));
        if (done) c.close();
        else c.enqueue(value!);
      },
      cancel: () => upstream.cancel(),
    });
    cutGet = () => {
      controller.error(new Error('cut by the test'));
      void upstream.cancel();
    };
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const options = {
    authProvider: provider,
    fetch: recordingFetch,
    reconnectionOptions: {
      initialReconnectionDelay: 50,
      maxReconnectionDelay: 500,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 5,
    },
  };
  const url = new URL(`${gatewayUrl}/v1/mcp`);
  const first = new StreamableHTTPClientTransport(url, options);
  await expect(new Client({ name, version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
    UnauthorizedError,
  );
  await first.finishAuth(provider.code!);
  const transport = new StreamableHTTPClientTransport(url, options);
  const client = new Client({ name, version: '1.0.0' });
  clients.push(client);
  const changes: string[] = [];
  client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
    changes.push(notification.method);
  });
  const messages: unknown[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    messages.push(notification.params.data);
  });
  await client.connect(transport);
  const session = () => transport.sessionId!;
  // connect() returns before the SDK's GET stream is open: wait for it, so what follows has a known order.
  await until(
    () =>
      served.some(
        (entry) => entry.httpMethod === 'GET' && entry.session === session() && entry.status === 200,
      ),
    `the GET stream of ${name}`,
  );
  return {
    client,
    provider,
    transport,
    session,
    changes,
    messages,
    dropGetStream: () => cutGet?.(),
    holdNextGet() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return release;
    },
  };
}

/** Swaps the configuration file to the other tool list and tells only `name` to reload it. */
async function changeToolsAt(name: 'A' | 'B'): Promise<void> {
  const next = await readFile(`${configFile}.grades`, 'utf8');
  const current = await readFile(configFile, 'utf8');
  await writeFile(`${configFile}.grades`, current);
  await writeFile(configFile, next);
  const before = services[name].output().split('configuration reloaded (').length;
  services[name].child.kill('SIGHUP');
  await until(
    () => services[name].output().split('configuration reloaded (').length > before,
    `service ${name} to reload`,
  );
}

const gatewayGetStream = (client: Connected) =>
  served.find(
    (entry) => entry.httpMethod === 'GET' && entry.session === client.session() && entry.status === 200,
  )!;

describe('two service processes behind one Envoy, sharing state.redis', () => {
  let one: Connected;
  let two: Connected;

  it('a session initialized on one process serves tools/call on the other', async () => {
    one = await connect('one');
    const mine = () => served.filter((entry) => entry.session === one.session());
    const initialize = served.filter((entry) => entry.client === 'one' && entry.rpc === 'initialize').at(-1)!;
    expect(initialize.status).toBe(200);

    const { tools } = await one.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['notes__count', 'notes__wait', 'slow-thing']);
    for (let i = 0; i < 4; i++) {
      const call = one.client.callTool({ name: 'slow-thing', arguments: { name: `n${i}` } });
      await until(() => slow.held.length === 1, 'the tool call at the backend');
      slow.releaseAll();
      expect((await call).isError).toBeFalsy();
    }
    const calls = mine().filter((entry) => entry.rpc === 'tools/call');
    expect(calls.map((entry) => entry.status)).toEqual([200, 200, 200, 200]);
    // Round robin: the four calls alternate, so two of them ran on the process that did not initialize.
    expect(new Set(calls.map((entry) => entry.by))).toEqual(new Set(['A', 'B']));
    expect(calls.filter((entry) => entry.by !== initialize.by)).toHaveLength(2);
  });

  it('tools/list_changed reaches sessions whose streams are on either process, when only one process reloads', async () => {
    two = await connect('two');
    const [streamOne, streamTwo] = [gatewayGetStream(one), gatewayGetStream(two)];
    expect(streamOne.by).not.toBe(streamTwo.by);
    await changeToolsAt('B');
    await until(() => one.changes.length === 1 && two.changes.length === 1, 'list_changed at both sessions', {
      timeoutMs: 5000,
    });
    expect([one.changes, two.changes]).toEqual([[toolsChanged], [toolsChanged]]);
  });

  it('a GET stream cut on one process resumes on the other with Last-Event-ID, replaying what it missed', async () => {
    const streamOne = gatewayGetStream(one);
    const release = one.holdNextGet();
    one.dropGetStream();
    // While one's stream is down, the tools change back (at B, the one process that had changed them); two, still
    // connected, hears of it.
    await changeToolsAt('B');
    await until(() => two.changes.length === 2, 'the second list_changed at two', { timeoutMs: 5000 });
    expect(one.changes).toHaveLength(1);
    // Round robin alternates: make the held reconnect the next pick after one on the stream's process, so it goes
    // to the other one.
    if (lastServedBy() !== streamOne.by) await one.client.ping();
    expect(lastServedBy()).toBe(streamOne.by);
    release();
    await until(() => one.changes.length === 2, 'the missed list_changed, replayed', { timeoutMs: 5000 });
    const resumed = served
      .filter((entry) => entry.httpMethod === 'GET' && entry.session === one.session())
      .at(-1)!;
    expect(resumed).toMatchObject({ status: 200, by: other(streamOne.by!) });
    expect(resumed.lastEventId).toMatch(/^\d+-\d+$/);
  });

  it("bounds one session's concurrent requests over both processes (429 on the third)", async () => {
    const first = one.client.callTool({ name: 'slow-thing', arguments: { name: 'held-1' } });
    const second = one.client.callTool({ name: 'slow-thing', arguments: { name: 'held-2' } });
    await until(() => slow.held.length === 2, 'two held tool calls');
    const running = served
      .filter((entry) => entry.session === one.session() && entry.rpc === 'tools/call')
      .slice(-2);
    expect(new Set(running.map((entry) => entry.by)).size).toBe(2);
    await expect(one.client.callTool({ name: 'slow-thing', arguments: { name: 'third' } })).rejects.toThrow(
      /Too Many Requests[\s\S]*mcp\.maxConcurrentRequestsPerSession/,
    );
    slow.releaseAll();
    await Promise.all([first, second]);
    const after = one.client.callTool({ name: 'slow-thing', arguments: { name: 'after' } });
    await until(() => slow.held.length === 1, 'the call after the slots were freed');
    slow.releaseAll();
    expect((await after).isError).toBeFalsy();
  });

  it('a revoked grant is refused by both processes', async () => {
    const tokens = two.provider.tokens()!;
    const metadata = (await (await fetch(`${gatewayUrl}/.well-known/oauth-authorization-server`)).json()) as {
      revocation_endpoint: string;
    };
    const revoked = await fetch(metadata.revocation_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: tokens.refresh_token!,
        token_type_hint: 'refresh_token',
        client_id: two.provider.clientInformation()!.client_id,
      }),
    });
    expect(revoked.status).toBe(200);
    const attempt = async () => {
      const response = await fetch(`${gatewayUrl}/v1/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens.access_token}`,
          'mcp-session-id': two.session(),
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      await response.body?.cancel();
      return { status: response.status, by: processOf.get(response.headers.get('x-served-by') ?? '') };
    };
    const [x, y] = [await attempt(), await attempt()];
    expect([x.status, y.status]).toEqual([401, 401]);
    expect(new Set([x.by, y.by])).toEqual(new Set(['A', 'B']));
  });

  it("an upstream MCP server's session opened by one process is continued by the other, and ended by the DELETE", async () => {
    const upstream = await connect('upstream');
    const openedBefore = notes.opened.length;
    const counts: string[] = [];
    for (let i = 0; i < 4; i++) {
      const result = await upstream.client.callTool({ name: 'notes__count', arguments: {} });
      counts.push((result as { content: { text: string }[] }).content[0]!.text);
    }
    const calls = served.filter(
      (entry) => entry.session === upstream.session() && entry.rpc === 'tools/call',
    );
    expect(new Set(calls.map((entry) => entry.by))).toEqual(new Set(['A', 'B']));
    // One upstream session counted every call, whichever process served it.
    expect(counts).toEqual(['1', '2', '3', '4']);
    expect(notes.opened.length - openedBefore).toBe(1);
    const id = notes.opened.at(-1)!;
    const upstreamCalls = notes.requests.filter((request) => request.tool === 'count').slice(-4);
    expect(upstreamCalls.map((request) => request.headers['mcp-session-id'])).toEqual([id, id, id, id]);
    await upstream.transport.terminateSession();
    await until(() => notes.closed.includes(id), 'the upstream session to be ended', { timeoutMs: 10_000 });
    await upstream.client.close();
  });

  it("mcp.writeTools annotations: a tool's readOnlyHint seen in a listing through one engine process is known to the other", async () => {
    const url = `${gatewayUrl}/notes/mcp`;
    // A read-only token: every call of the tool rests on its readOnlyHint.
    const provider = new HeadlessProvider({ user: alice, clientName: 'own url', scope: 'read:courses-work' });
    const options = { authProvider: provider };
    await expect(
      new Client({ name: 'own', version: '1.0.0' }).connect(
        new StreamableHTTPClientTransport(new URL(url), options),
      ),
    ).rejects.toBeInstanceOf(UnauthorizedError);
    await new StreamableHTTPClientTransport(new URL(url), options).finishAuth(provider.code!);
    const transport = new StreamableHTTPClientTransport(new URL(url), options);
    const client = new Client({ name: 'own', version: '1.0.0' });
    clients.push(client);
    await client.connect(transport);
    const token = provider.tokens()!.access_token;
    expect(token.length).toBeGreaterThan(0);
    expect(provider.tokens()!.scope).toBe('read:courses-work');
    // A read-only tool no listing has shown yet (the service's own listings went through both engines).
    notes.addTool('fresh_read', { readOnly: true });
    const servedBy = () => engines.map((engine) => engine.output().split('/notes/mcp').length);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('fresh_read');
    const before = servedBy();
    const statuses: number[] = [];
    for (let id = 1; id <= 4; id++) {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': transport.sessionId!,
          'mcp-protocol-version': transport.protocolVersion!,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'fresh_read', arguments: {} },
        }),
      });
      await response.body?.cancel();
      statuses.push(response.status);
    }
    // Both engine processes served some of the calls (each logs the requests it served).
    await until(() => {
      const after = servedBy();
      return after.every((count, i) => count > before[i]!);
    }, 'both engines to log some of the calls');
    expect(statuses).toEqual([200, 200, 200, 200]);
  });

  it("a client's cancellation of an upstream call reaches the upstream when it arrives at the other process", async () => {
    const client = await connect('cancel');
    const controller = new AbortController();
    const call = client.client.callTool({ name: 'notes__wait', arguments: {} }, undefined, {
      signal: controller.signal,
    });
    await until(() => waiting.length === 1, 'the upstream call to run');
    const runningCall = () =>
      served.find((entry) => entry.session === client.session() && entry.rpc === 'tools/call');
    await until(() => runningCall() !== undefined, 'the tools/call answer to start streaming');
    const running = runningCall()!;
    // Round robin alternates: make the cancellation the next pick after the call's process, so it goes to the other.
    if (lastServedBy() !== running.by) await client.client.ping();
    expect(lastServedBy()).toBe(running.by);
    controller.abort('the test gives up');
    await expect(call).rejects.toThrow();
    await until(() => cancelled.length === 1, 'the upstream call to be cancelled', { timeoutMs: 10_000 });
    const cancellation = served.find(
      (entry) => entry.session === client.session() && entry.rpc === 'notifications/cancelled',
    )!;
    expect(cancellation).toMatchObject({ status: 202, by: other(running.by!) });
    // The upstream was told in its own terms: a notifications/cancelled for its request, on its session.
    const upstreamCancel = notes.requests.find((request) => request.rpc === 'notifications/cancelled');
    expect(upstreamCancel?.headers['mcp-session-id']).toBe(notes.opened.at(-1));
    expect(cancelled).toEqual(waiting);
  });

  describe("an upstream session's notifications outside a call", () => {
    let logs: Connected;
    let upstreamSession: string;
    let opener: 'A' | 'B';
    const upstreamGets = () =>
      notes.requests.filter(
        (request) => request.method === 'GET' && request.headers['mcp-session-id'] === upstreamSession,
      );

    it("an upstream's log message on its GET stream reaches the client's GET stream on the other process", async () => {
      logs = await connect('logs');
      const streamBy = gatewayGetStream(logs).by!;
      // The call that opens the upstream session goes to the process that does not hold the client's stream.
      if (lastServedBy() !== streamBy) await logs.client.ping();
      await logs.client.callTool({ name: 'notes__count', arguments: {} });
      const call = served.filter(
        (entry) => entry.session === logs.session() && entry.rpc === 'tools/call',
      )[0]!;
      opener = call.by!;
      expect(opener).toBe(other(streamBy));
      upstreamSession = notes.opened.at(-1)!;
      await until(() => upstreamGets().length === 1, "the upstream session's GET stream");
      await notes.log(upstreamSession, 'outside a call');
      await until(() => logs.messages.length === 1, 'the log message at the client', { timeoutMs: 5000 });
      expect(logs.messages).toEqual(['outside a call']);
    });

    it('when the process holding the upstream GET stream stops, the other opens it again and notifications keep coming', async () => {
      await services[opener].stop();
      await until(() => upstreamGets().length === 2, 'the upstream GET stream opened again', {
        timeoutMs: 30_000,
      });
      // The stopping process let go of the upstream session without ending it: the other continues it.
      expect(notes.closed).not.toContain(upstreamSession);
      await notes.log(upstreamSession, 'after the takeover');
      await until(() => logs.messages.length === 2, 'the second log message at the client', {
        timeoutMs: 5000,
      });
      expect(logs.messages).toEqual(['outside a call', 'after the takeover']);
    }, 60_000);
  });
});
