import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { stringify } from 'yaml';
import { envoyArgs } from '../../src/config/envoy.js';
import { loadConfigFile } from '../../src/config/load.js';
import { bootstrapApis, freePort } from '../../src/config/plan.js';
import { findEnvoy } from '../../src/envoy/binary.js';
import { buildBootstrap } from '../../src/envoy/bootstrap/bootstrap.js';
import type { BootstrapApi, BootstrapPlan } from '../../src/envoy/bootstrap/plan.js';
import { checkEngineHealth } from '../../src/extproc/health-client.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));

const children: ChildProcess[] = [];
/** The children whose CPU time `load` accounts for, by role (several processes may share one). */
const roles: { role: string; child: ChildProcess }[] = [];

/**
 * Starts a child process that lives until the benchmark ends (its output is dropped unless it fails). With a role
 * (`envoy`, `engine`, `backend`…), `load` reports the CPU time it spent per request.
 */
export function spawnChild(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  role?: string,
): ChildProcess {
  const child = spawn(command, [...args], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  if (role) roles.push({ role, child });
  return child;
}

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks. */
const ticksPerSecond = 100;

/** CPU seconds (user + system, every thread) each role and the load generator (this process) have used so far. */
function cpuSeconds(): Map<string, number> {
  const totals = new Map<string, number>();
  for (const { role, child } of roles) {
    let seconds = 0;
    try {
      // Fields after the command name (which is in parentheses and may hold spaces): utime is the 14th field.
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds = (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
    } catch {
      // Not Linux, or the process is gone: no figure for it.
    }
    totals.set(role, (totals.get(role) ?? 0) + seconds);
  }
  const self = process.cpuUsage();
  totals.set('autocannon', (self.user + self.system) / 1e6);
  return totals;
}

export function stopChildren(): void {
  for (const child of children.splice(0)) child.kill('SIGKILL');
}

process.on('exit', stopChildren);

export async function waitFor(
  probe: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000} s`);
}

export const httpOk = (url: string) => async () => (await fetch(url)).ok;

/** One engine process, as `portcullis up` runs it. */
export async function startEngineProcess(port: number, configFile?: string, role = 'engine'): Promise<void> {
  const config = configFile ? ['--config', configFile] : [];
  spawnChild(
    process.execPath,
    [path.join(root, 'bin', 'portcullis.js'), 'engine', ...config, '--port', String(port)],
    process.env,
    role,
  );
  await waitFor(() => checkEngineHealth('127.0.0.1', port), `engine on ${port}`);
}

/** An engine process serving ext_proc on a Unix domain socket (`portcullis engine --socket`). */
export async function startEngineOnSocket(
  socketPath: string,
  configFile?: string,
  role = 'engine',
): Promise<void> {
  const config = configFile ? ['--config', configFile] : [];
  spawnChild(
    process.execPath,
    [path.join(root, 'bin', 'portcullis.js'), 'engine', ...config, '--socket', socketPath],
    process.env,
    role,
  );
  // The socket file appears when the engine has bound it; Envoy's own health check then finds it serving.
  await waitFor(async () => existsSync(socketPath), `engine on ${socketPath}`);
}

/**
 * A gateway for a benchmark from a configuration file: one engine process running its policies, and an Envoy in
 * front (see startBenchEnvoy: the `direct` API is the baseline). Resolves to the gateway's URL.
 */
export async function startBenchGateway(
  configFile: string,
  directory: string,
  name?: string,
): Promise<string> {
  const enginePort = await freePort();
  await startEngineProcess(enginePort, configFile);
  const { config } = await loadConfigFile(configFile);
  return startBenchEnvoy({
    enginePorts: [enginePort],
    directory,
    apis: bootstrapApis(config),
    backends: config.backends,
    ...(name ? { name } : {}),
  });
}

/** A backend answering every request with the same small JSON body. */
export async function startStaticBackend(port: number): Promise<void> {
  spawnChild(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'bench', 'support', 'static-backend.ts')],
    {
      ...process.env,
      PORT: String(port),
    },
    'backend',
  );
  await waitFor(httpOk(`http://127.0.0.1:${port}/`), `backend on ${port}`);
}

/** The LLM benchmark's streaming backend (bench/support/sse-backend.ts): CHUNKS events per answer. */
export async function startSseBackend(port: number, chunks: number): Promise<void> {
  spawnChild(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'bench', 'support', 'sse-backend.ts')],
    { ...process.env, PORT: String(port), CHUNKS: String(chunks) },
    'backend',
  );
  await waitFor(httpOk(`http://127.0.0.1:${port}/`), `backend on ${port}`);
}

export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
  /** CPU time per request (µs) of each role and of the load generator during the measured run (`load` only). */
  readonly cpuPerRequest?: ReadonlyMap<string, number>;
}

/** Drives `url` with autocannon: a short warm-up, then the measured run. */
export async function load(
  url: string,
  options: {
    seconds?: number;
    connections?: number;
    headers?: Record<string, string>;
    method?: 'GET' | 'POST';
    body?: string;
  } = {},
): Promise<LoadResult> {
  const base = {
    url,
    connections: options.connections ?? 32,
    pipelining: 1,
    headers: options.headers,
    ...(options.method ? { method: options.method } : {}),
    ...(options.body === undefined ? {} : { body: options.body }),
  };
  await autocannon({ ...base, duration: 1 });
  const before = cpuSeconds();
  const result = await autocannon({ ...base, duration: options.seconds ?? 8 });
  const after = cpuSeconds();
  const requests = Math.max(1, result.requests.total);
  const cpuPerRequest = new Map(
    [...after].map(([role, seconds]) => [role, ((seconds - (before.get(role) ?? 0)) * 1e6) / requests]),
  );
  return {
    cpuPerRequest,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/**
 * Drives `url` at a fixed `rate` (requests per second over all connections) and measures each response's latency
 * to the microsecond (autocannon's own percentiles are whole milliseconds).
 */
export async function loadAtRate(
  url: string,
  rate: number,
  options: { seconds?: number; connections?: number } = {},
): Promise<LoadResult> {
  const base = { url, connections: options.connections ?? 8, pipelining: 1, overallRate: Math.max(1, rate) };
  await autocannon({ ...base, duration: 1 });
  const latencies: number[] = [];
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ ...base, duration: options.seconds ?? 5 }, (error, finished) =>
      error ? reject(error) : resolve(finished),
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime));
  });
  latencies.sort((a, b) => a - b);
  const at = (quantile: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor(quantile * latencies.length))] ?? 0;
  return {
    requestsPerSecond: result.requests.average,
    p50: at(0.5),
    p99: at(0.99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/**
 * The Go no-op ext_proc server of bench/go-noop-extproc, built with the Go toolchain into `.portcullis/bench/` when
 * missing or older than its source (`GO` names the toolchain; else `go` on the PATH, else /usr/local/go/bin/go).
 * A benchmark dependency only. Resolves to the binary's path.
 */
export function buildGoNoop(): string {
  const source = path.join(root, 'bench', 'go-noop-extproc');
  const binary = path.join(root, '.portcullis', 'bench', 'go-noop-extproc');
  const newest = Math.max(...readdirSync(source).map((name) => statSync(path.join(source, name)).mtimeMs));
  if (existsSync(binary) && statSync(binary).mtimeMs >= newest) return binary;
  mkdirSync(path.dirname(binary), { recursive: true });
  const onPath = spawnSync('go', ['version']).status === 0;
  const go = process.env.GO ?? (onPath ? 'go' : '/usr/local/go/bin/go');
  const built = spawnSync(go, ['build', '-o', binary, '.'], { cwd: source, stdio: 'inherit' });
  if (built.status !== 0) {
    throw new Error(
      `go build in ${source} failed (${built.error?.message ?? `exit ${built.status}`}): the Go toolchain and the Go module proxy are needed for this benchmark only`,
    );
  }
  return binary;
}

export function formatLoad(label: string, result: LoadResult): string {
  const problems =
    result.errors || result.non2xx ? `  (errors ${result.errors}, non-2xx ${result.non2xx})` : '';
  return `${label.padEnd(34)} ${Math.round(result.requestsPerSecond).toLocaleString('en-US').padStart(8)} req/s   p50 ${String(result.p50).padStart(4)} ms   p99 ${String(result.p99).padStart(4)} ms${problems}`;
}

/** `CPU µs/request: envoy 95, engine 120, backend 40, autocannon 60 = 315` (processes started with a role). */
export function formatCpu(result: LoadResult, indent = '      '): string {
  const cpu = result.cpuPerRequest ?? new Map<string, number>();
  const parts = [...cpu].map(([role, micros]) => `${role} ${Math.round(micros)}`);
  const total = [...cpu.values()].reduce((sum, micros) => sum + micros, 0);
  return `${indent}CPU µs/request: ${parts.join(', ')} = ${Math.round(total)}`;
}

/**
 * Starts an Envoy for a benchmark in front of the given engine processes and APIs. The API with id `direct` keeps
 * its route but without ext_proc — the baseline, exactly as a route with no engine in front of it. Resolves to the
 * gateway's URL once Envoy is ready.
 */
export async function startBenchEnvoy(options: {
  readonly enginePorts: readonly number[];
  /** The engine's Unix domain socket instead of `enginePorts`. */
  readonly engineSocket?: string;
  readonly apis: readonly BootstrapApi[];
  /** Named backends (`set-backend-service backend-id`), each its own cluster. */
  readonly backends?: BootstrapPlan['backends'];
  readonly directory: string;
  readonly name?: string;
  /** The role its CPU time is reported under (`envoy`). */
  readonly role?: string;
}): Promise<string> {
  const gatewayPort = await freePort();
  const adminPort = await freePort();
  const bootstrap = buildBootstrap({
    gateway: { host: '127.0.0.1', port: gatewayPort },
    admin: { host: '127.0.0.1', port: adminPort },
    engine: {
      endpoints: options.enginePorts.map((port) => ({ host: '127.0.0.1', port })),
      messageTimeoutMs: 1000,
      ...(options.engineSocket !== undefined ? { socketPath: options.engineSocket } : {}),
    },
    // Nothing in a benchmark calls the service; the cluster needs an address all the same.
    service: { host: '127.0.0.1', port: adminPort },
    apis: options.apis,
    ...(options.backends ? { backends: options.backends } : {}),
  }) as any;
  const routes =
    bootstrap.static_resources.listeners[0].filter_chains[0].filters[0].typed_config.route_config
      .virtual_hosts[0].routes;
  const direct = routes.find((route: { name: string }) => route.name === 'api_direct');
  if (direct) {
    direct.typed_per_filter_config = {
      'envoy.filters.http.ext_proc': {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute',
        disabled: true,
      },
    };
  }
  const file = path.join(options.directory, `${options.name ?? 'bench'}-envoy.yaml`);
  await writeFile(file, stringify(bootstrap));
  spawnChild(
    findEnvoy(),
    envoyArgs(file, { concurrency: 1, logLevel: 'error' }),
    process.env,
    options.role ?? 'envoy',
  );
  await waitFor(
    async () => (await (await fetch(`http://127.0.0.1:${adminPort}/ready`)).text()).includes('LIVE'),
    `envoy${options.name ? ` (${options.name})` : ''}`,
  );
  return `http://127.0.0.1:${gatewayPort}`;
}

/**
 * Drives each of `rows` in turn, `rounds` times (interleaved, so a change of the machine's load touches every row
 * alike), and answers each row's round with the median requests/s (its latency and CPU figures belong together).
 */
export async function interleavedMedians(
  rows: readonly { readonly label: string; readonly url: string }[],
  options: { readonly rounds: number; readonly seconds: number },
): Promise<LoadResult[]> {
  for (const row of rows) await waitFor(httpOk(row.url), row.label.trim());
  const results = rows.map((): LoadResult[] => []);
  for (let round = 0; round < options.rounds; round++)
    for (const [i, row] of rows.entries())
      results[i]!.push(await load(row.url, { seconds: options.seconds }));
  return results.map(
    (runs) =>
      [...runs].sort((x, y) => x.requestsPerSecond - y.requestsPerSecond)[Math.floor(runs.length / 2)]!,
  );
}
