/**
 * The MCP endpoint under load, through Envoy, with the stack as `portcullis up` runs it: (a) a plain proxied GET of
 * the Course API (Envoy + engine → backend), (b) authenticated `tools/list`, (c) authenticated `tools/call` of the
 * tool for that same GET (Envoy → service → Envoy + engine → backend). One run, same backend; prints requests/s,
 * p50/p99 and each ratio to (a).
 *
 * The access token is obtained once, up front, through the real flow (registration, login and consent pages,
 * code exchange); the session is initialized once and reused by every request, as an MCP client does.
 *
 * Run: node --import tsx bench/mcp.ts   (BENCH_SECONDS, default 8; BENCH_CONNECTIONS, default 32)
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { hashPassword } from '../src/auth/index.js';
import { freePort } from '../src/config/plan.js';
import { accessTokenFor } from './support/sign-in.js';
import { formatLoad, type LoadResult, root, spawnChild, stopChildren, waitFor } from './support/stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
const USER = { username: 'bench', password: 'bench-password' };
const REDIRECT = 'http://127.0.0.1:1/callback';
const REVISION = '2025-06-18';

const [gatewayPort, adminPort, backendPort] = [await freePort(), await freePort(), await freePort()];
const gateway = `http://127.0.0.1:${gatewayPort}`;
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-mcp-'));
const config = path.join(directory, 'gateway.yaml');
await writeFile(
  config,
  `gateway: { http: { host: 127.0.0.1, port: ${gatewayPort} } }
admin: { port: ${adminPort} }
envoy: { concurrency: 1, logLevel: error }
apis:
  - id: courses
    urlSuffix: courses
    serviceUrl: http://127.0.0.1:${backendPort}
    operations:
      - { id: list-courses, method: GET, urlTemplate: /api/Course }
products:
  - { id: courses, apis: [courses] }
# Every connection uses the one session: let it run as many requests at once (the default, 8, answers the rest 429).
mcp: { maxConcurrentRequestsPerSession: ${Math.min(256, connections)} }
auth:
  issuer: ${gateway}
  baseUrl: ${gateway}
  cookieSecure: false
  users: [{ username: ${USER.username}, passwordHash: "${await hashPassword(USER.password)}" }]
processes:
  - name: courses
    command: [node, backend.ts]
    cwd: ${path.join(root, 'examples', 'courses')}
    env: { PORT: "${backendPort}" }
    readyUrl: http://127.0.0.1:${backendPort}/healthz
`,
);
const up = spawnChild(process.execPath, [path.join(root, 'bin', 'portcullis.js'), 'up', '--config', config]);
/** `up` stops its children (Envoy, engine, service, backend) only when asked nicely; SIGKILL would orphan them. */
async function stopUp(): Promise<void> {
  if (up.exitCode !== null || up.signalCode !== null) return;
  const exited = new Promise((resolve) => up.once('exit', resolve));
  up.kill('SIGINT');
  await exited;
}
async function main(): Promise<void> {
  await waitFor(
    async () => (await fetch(`${gateway}/.well-known/oauth-protected-resource/v1/mcp`)).ok,
    'portcullis up',
    60_000,
  );

  // Registration, the login and consent pages, code exchange: the access token a real client would hold.
  const token = await accessTokenFor(gateway, USER, { redirectUri: REDIRECT, scope: 'read:courses-work' });
  const mcpHeaders: Record<string, string> = {
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const initialized = await fetch(`${gateway}/v1/mcp`, {
    method: 'POST',
    headers: mcpHeaders,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  if (initialized.status !== 200) throw new Error(`initialize answered ${initialized.status}`);
  mcpHeaders['mcp-session-id'] = initialized.headers.get('mcp-session-id')!;
  mcpHeaders['mcp-protocol-version'] = REVISION;
  await fetch(`${gateway}/v1/mcp`, {
    method: 'POST',
    headers: mcpHeaders,
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });

  const toolsList = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
  const toolsCall = JSON.stringify({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'list-courses', arguments: {} },
  });

  // Check every measured request really does its work before timing it.
  const direct = await (await fetch(`${gateway}/courses/api/Course`)).text();
  const listed = (await (
    await fetch(`${gateway}/v1/mcp`, { method: 'POST', headers: mcpHeaders, body: toolsList })
  ).json()) as { result: { tools: { name: string }[] } };
  if (listed.result.tools[0]?.name !== 'list-courses')
    throw new Error(`tools/list: ${JSON.stringify(listed)}`);
  const called = (await (
    await fetch(`${gateway}/v1/mcp`, { method: 'POST', headers: mcpHeaders, body: toolsCall })
  ).json()) as { result: { content: { text: string }[] } };
  if (called.result.content[0]?.text !== direct) throw new Error(`tools/call: ${JSON.stringify(called)}`);

  async function measure(options: autocannon.Options): Promise<LoadResult> {
    const base = { connections, pipelining: 1, ...options };
    await autocannon({ ...base, duration: 1 });
    const result = await autocannon({ ...base, duration: seconds });
    return {
      requestsPerSecond: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts,
      non2xx: result.non2xx,
    };
  }

  const a = await measure({ url: `${gateway}/courses/api/Course` });
  const b = await measure({ url: `${gateway}/v1/mcp`, method: 'POST', headers: mcpHeaders, body: toolsList });
  const c = await measure({ url: `${gateway}/v1/mcp`, method: 'POST', headers: mcpHeaders, body: toolsCall });
  console.log(
    `mcp (portcullis up: Envoy concurrency 1, one engine, one service process; ${connections} connections, ${seconds} s each, revision ${REVISION}, JSON responses)`,
  );
  console.log(formatLoad('  (a) GET /courses/api/Course', a));
  console.log(formatLoad('  (b) MCP tools/list', b));
  console.log(formatLoad('  (c) MCP tools/call list-courses', c));
  console.log(
    `  ratio b/a ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(2)}   c/a ${(c.requestsPerSecond / a.requestsPerSecond).toFixed(2)}`,
  );
}

try {
  await main();
} finally {
  await stopUp();
  stopChildren();
}
