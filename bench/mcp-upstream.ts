/**
 * Remote MCP servers behind the gateway, one run, one upstream (the official SDK's McpServer over Streamable HTTP,
 * JSON answers, in its own process): `tools/call` of one tool (a) directly on the upstream, (b) through Envoy and the
 * engine at the MCP API's own URL (the engine checks the token, no policy), (c) aggregated in `/v1/mcp` (Envoy →
 * service → Envoy + engine → upstream, in the session's upstream session); and (d) the aggregated `tools/list` over
 * three MCP APIs (the three upstream sessions' lists are read once, then cached until list_changed). Prints requests/s,
 * p50/p99 and each ratio to (a).
 *
 * Run: node --import tsx bench/mcp-upstream.ts   (BENCH_SECONDS, default 8; BENCH_CONNECTIONS, default 32)
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
const SCOPE = 'read:tools-work write:tools-work';

// The upstream in its own process (bench/support/mcp-upstream-server.ts), so the load generator does not share its
// event loop.
const upstreamPort = await freePort();
const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`;
spawnChild(
  process.execPath,
  ['--import', 'tsx', path.join(root, 'bench', 'support', 'mcp-upstream-server.ts')],
  {
    ...process.env,
    PORT: String(upstreamPort),
  },
);

const [gatewayPort, adminPort] = [await freePort(), await freePort()];
const gateway = `http://127.0.0.1:${gatewayPort}`;
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-mcp-upstream-'));
const config = path.join(directory, 'gateway.yaml');
const mcpApi = (id: string) => `  - { id: ${id}, type: mcp, urlSuffix: ${id}, serviceUrl: "${upstreamUrl}" }`;
await writeFile(
  config,
  `gateway: { http: { host: 127.0.0.1, port: ${gatewayPort} } }
admin: { port: ${adminPort} }
envoy: { concurrency: 1, logLevel: error }
apis:
${['one', 'two', 'three'].map(mcpApi).join('\n')}
products:
  - { id: tools, apis: [one, two, three] }
mcp: { maxConcurrentRequestsPerSession: ${Math.min(256, 2 * connections)} }
auth:
  issuer: ${gateway}
  baseUrl: ${gateway}
  cookieSecure: false
  dataDir: auth
  users: [{ username: ${USER.username}, passwordHash: "${await hashPassword(USER.password)}" }]
`,
);
const up = spawnChild(process.execPath, [path.join(root, 'bin', 'portcullis.js'), 'up', '--config', config]);
async function stopUp(): Promise<void> {
  if (up.exitCode !== null || up.signalCode !== null) return;
  const exited = new Promise((resolve) => up.once('exit', resolve));
  up.kill('SIGINT');
  await exited;
}

/** Registration, the login and consent pages, code exchange, for `resource`. */
const accessToken = (resource: string) =>
  accessTokenFor(gateway, USER, { redirectUri: REDIRECT, scope: SCOPE, resource });

/** An initialized session at `url`: the headers every later request carries. */
async function session(url: string, token?: string): Promise<Record<string, string>> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
  const initialized = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  if (initialized.status !== 200) throw new Error(`initialize at ${url} answered ${initialized.status}`);
  await initialized.arrayBuffer();
  headers['mcp-session-id'] = initialized.headers.get('mcp-session-id')!;
  headers['mcp-protocol-version'] = REVISION;
  await (
    await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).arrayBuffer();
  return headers;
}

const call = (name: string) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name, arguments: { text: 'hi' } },
  });
const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });

/** One request, checked: the measured requests really do their work. */
async function once(url: string, headers: Record<string, string>, body: string): Promise<unknown> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${url}: ${response.status} ${text}`);
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) return JSON.parse(text);
  // An SSE answer (Portcullis streams upstream calls; it may open with a comment): its last data line is the answer.
  const data = text.split('\n').filter((line) => line.startsWith('data: '));
  return JSON.parse(data.at(-1)!.slice('data: '.length));
}

async function measure(options: autocannon.Options): Promise<LoadResult> {
  const base = { connections, pipelining: 1, method: 'POST' as const, ...options };
  await autocannon({ ...base, duration: 1 });
  const result = await autocannon({ ...base, duration: seconds });
  if (result.non2xx > 0) console.log(`  statuses: ${JSON.stringify(result.statusCodeStats)}`);
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

async function main(): Promise<void> {
  await waitFor(
    async () => (await fetch(`http://127.0.0.1:${upstreamPort}/healthz`)).ok,
    'the upstream',
    30_000,
  );
  await waitFor(
    async () => (await fetch(`${gateway}/.well-known/oauth-protected-resource/one/mcp`)).ok,
    'portcullis up',
    60_000,
  );
  const direct = await session(upstreamUrl);
  const ownUrl = `${gateway}/one/mcp`;
  const own = await session(ownUrl, await accessToken(ownUrl));
  const aggregatedUrl = `${gateway}/v1/mcp`;
  const aggregated = await session(aggregatedUrl, await accessToken(aggregatedUrl));

  const expectEcho = (answer: unknown, where: string) => {
    const text = (answer as { result?: { content?: { text: string }[] } }).result?.content?.[0]?.text;
    if (text !== 'hi') throw new Error(`${where}: ${JSON.stringify(answer)}`);
  };
  expectEcho(await once(upstreamUrl, direct, call('echo')), 'direct');
  expectEcho(await once(ownUrl, own, call('echo')), "the API's own URL");
  expectEcho(await once(aggregatedUrl, aggregated, call('one__echo')), '/v1/mcp');
  const listed = (await once(aggregatedUrl, aggregated, list)) as { result: { tools: { name: string }[] } };
  const names = listed.result.tools.map((tool) => tool.name).join(',');
  if (names !== 'one__echo,three__echo,two__echo') throw new Error(`tools/list: ${names}`);

  const a = await measure({ url: upstreamUrl, headers: direct, body: call('echo') });
  const b = await measure({ url: ownUrl, headers: own, body: call('echo') });
  const c = await measure({ url: aggregatedUrl, headers: aggregated, body: call('one__echo') });
  const d = await measure({ url: aggregatedUrl, headers: aggregated, body: list });
  console.log(
    `mcp-upstream (portcullis up: Envoy concurrency 1, one engine, one service process; upstream in its own process; ${connections} connections, ${seconds} s each, revision ${REVISION})`,
  );
  console.log(formatLoad('  (a) tools/call directly on the upstream', a));
  console.log(formatLoad("  (b) tools/call at the MCP API's own URL", b));
  console.log(formatLoad('  (c) tools/call aggregated in /v1/mcp', c));
  console.log(formatLoad('  (d) tools/list aggregated, 3 upstreams', d));
  const ratio = (x: LoadResult) => (x.requestsPerSecond / a.requestsPerSecond).toFixed(2);
  console.log(`  ratio b/a ${ratio(b)}   c/a ${ratio(c)}   d/a ${ratio(d)}`);
}

try {
  await main();
} finally {
  await stopUp();
  stopChildren();
}
