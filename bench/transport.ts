/**
 * Issue 16: the engine against the floor of the design — the same Envoy bootstrap calling a no-op ext_proc server
 * written in Go (bench/go-noop-extproc: CONTINUE and one header mutation, as the engine's pass-through answers).
 * In interleaved rounds, each through its own Envoy (concurrency 1):
 *   direct        Envoy → backend, ext_proc off on the route
 *   go no-op      Envoy + the Go no-op → backend
 *   pass-through  Envoy + the engine without configuration → backend
 *   node floor    Envoy + node:http2 answering with a fixed message (support/node-h2-floor.ts): no gRPC library,
 *                 no decoding, no engine — the least a Node ext_proc server can cost
 *   sample policy Envoy + the engine running the spec's sample inbound policy (examples/courses) → backend
 *   cache hit     Envoy + the engine answering from cache-lookup (examples/courses list-courses), no backend
 *   no policy     an API without any policy: its routes skip ext_proc (envoy/bootstrap/engine-bypass.ts)
 * Prints req/s, p50/p99 and CPU µs per request of each process, with ratios to the Go no-op of the same run (no
 * policy: to direct); then a fixed-rate run at half the Go no-op's rate with p99 latency added over direct.
 * The load average is printed beside the figures: on a shared machine they move with it.
 * BENCH_SECONDS (per configuration and round, default 4), BENCH_ROUNDS (default 3).
 */
import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfigFile } from '../src/config/load.js';
import { bootstrapApis, freePort } from '../src/config/plan.js';
import { checkEngineHealth } from '../src/extproc/health-client.js';
import {
  buildGoNoop,
  httpOk,
  type LoadResult,
  load,
  loadAtRate,
  root,
  spawnChild,
  startBenchEnvoy,
  startEngineProcess,
  startStaticBackend,
  stopChildren,
  waitFor,
} from './support/stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-transport-'));
const load1 = () => loadavg()[0]!.toFixed(2);

const goBinary = buildGoNoop();
const backendPort = await freePort();
await startStaticBackend(backendPort);
const backend = `http://127.0.0.1:${backendPort}`;

// The example gateway with its policies, every backend the static one.
await cp(path.join(root, 'examples', 'courses', 'policies'), path.join(directory, 'policies'), {
  recursive: true,
});
const example = (await readFile(path.join(root, 'examples', 'courses', 'gateway.yaml'), 'utf8')).replaceAll(
  'http://127.0.0.1:8081',
  backend,
);
const apisAt = example.indexOf('\napis:\n');
const productsAt = example.indexOf('\nproducts:');
const namedValues = /namedValues:\n(?: {2}.*\n)+/.exec(example)?.[0] ?? '';
const backends = /backends:\n(?: {2}.*\n)+/.exec(example)?.[0] ?? '';
const configFile = path.join(directory, 'gateway.yaml');
await writeFile(
  configFile,
  `${namedValues}${backends}${example.slice(apisAt + 1, productsAt)}
  - { id: direct, urlSuffix: direct, serviceUrl: "${backend}" }
  - id: plain
    urlSuffix: plain
    serviceUrl: "${backend}"
    operations: [{ method: GET, urlTemplate: /api/Course }, { method: GET, urlTemplate: "/api/Course/{id}" }]
`,
);
const { config } = await loadConfigFile(configFile);
if (!bootstrapApis(config).find((api) => api.id === 'plain')?.engineBypass)
  throw new Error(
    'the policy-less API does not skip the engine: the bypass row would measure something else',
  );

// Three ext_proc servers, each behind its own Envoy.
const goPort = await freePort();
spawnChild(goBinary, ['--port', String(goPort)], process.env, 'go no-op');
await waitFor(() => checkEngineHealth('127.0.0.1', goPort), 'go no-op');
const floorPort = await freePort();
spawnChild(
  process.execPath,
  ['--import', 'tsx', path.join(root, 'bench', 'support', 'node-h2-floor.ts')],
  { ...process.env, PORT: String(floorPort) },
  'node floor',
);
await waitFor(() => checkEngineHealth('127.0.0.1', floorPort), 'node floor');
const passPort = await freePort();
await startEngineProcess(passPort, undefined, 'engine (pass-through)');
const configPort = await freePort();
await startEngineProcess(configPort, configFile, 'engine (examples/courses)');

const goUrl = await startBenchEnvoy({
  enginePorts: [goPort],
  directory,
  name: 'go',
  role: 'envoy (go)',
  apis: [{ id: 'go', urlSuffix: 'go', serviceUrl: backend }],
});
const floorUrl = await startBenchEnvoy({
  enginePorts: [floorPort],
  directory,
  name: 'floor',
  role: 'envoy (node floor)',
  apis: [{ id: 'floor', urlSuffix: 'floor', serviceUrl: backend }],
});
const passUrl = await startBenchEnvoy({
  enginePorts: [passPort],
  directory,
  name: 'pass',
  role: 'envoy (pass-through)',
  apis: [{ id: 'engine', urlSuffix: 'engine', serviceUrl: backend }],
});
const configUrl = await startBenchEnvoy({
  enginePorts: [configPort],
  directory,
  name: 'config',
  role: 'envoy (examples/courses)',
  apis: bootstrapApis(config),
});

interface Row {
  readonly label: string;
  readonly url: string;
  /** The processes that serve it, by role; the others idle meanwhile. */
  readonly roles: readonly string[];
  readonly results: LoadResult[];
}
const row = (label: string, url: string, roles: string[]): Row => ({ label, url, roles, results: [] });
const direct = row('direct (Envoy → backend)', `${configUrl}/direct/api/Course`, [
  'envoy (examples/courses)',
  'backend',
]);
const go = row('Envoy + Go no-op', `${goUrl}/go/api/Course`, ['envoy (go)', 'go no-op', 'backend']);
const rows: Row[] = [
  direct,
  go,
  row('Envoy + Node HTTP/2 floor', `${floorUrl}/floor/api/Course`, [
    'envoy (node floor)',
    'node floor',
    'backend',
  ]),
  row('Envoy + engine pass-through', `${passUrl}/engine/api/Course`, [
    'envoy (pass-through)',
    'engine (pass-through)',
    'backend',
  ]),
  // The sample inbound policy takes its rewrite branch: `?courseID=7` → /api/Course/7.
  row('Envoy + engine, sample inbound policy', `${configUrl}/courses/api/Course/7?courseID=7`, [
    'envoy (examples/courses)',
    'engine (examples/courses)',
    'backend',
  ]),
  row('Envoy + engine, cache hit', `${configUrl}/courses/api/Course`, [
    'envoy (examples/courses)',
    'engine (examples/courses)',
    'backend',
  ]),
  row('no policy (ext_proc skipped)', `${configUrl}/plain/api/Course`, [
    'envoy (examples/courses)',
    'backend',
  ]),
];
for (const { url, label } of rows) await waitFor(httpOk(url), label);

console.log(
  `transport (Envoy concurrency 1, 32 connections, ${rounds} interleaved rounds of ${seconds} s each; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')} at start)`,
);
for (let round = 0; round < rounds; round++) {
  for (const entry of rows) entry.results.push(await load(entry.url, { seconds }));
  console.log(`  round ${round + 1} done, load average ${load1()}`);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
interface Summary {
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpu: Map<string, number>;
  readonly problems: number;
}
const summarize = (entry: Row): Summary => ({
  requestsPerSecond: median(entry.results.map((r) => r.requestsPerSecond)),
  p50: median(entry.results.map((r) => r.p50)),
  p99: median(entry.results.map((r) => r.p99)),
  cpu: new Map(
    [...entry.roles, 'autocannon'].map((role) => [
      role,
      median(entry.results.map((r) => r.cpuPerRequest?.get(role) ?? 0)),
    ]),
  ),
  problems: entry.results.reduce((sum, r) => sum + r.errors + r.non2xx, 0),
});
const goSummary = summarize(go);
const directSummary = summarize(direct);
/** A process's CPU per request against the Go no-op run's process of the same kind. */
const kind = (role: string) =>
  role.replace(/ \(.*\)$/, '').replace(/^(engine|go no-op|node floor)$/, 'ext_proc');
const goCpu = new Map([...goSummary.cpu].map(([role, micros]) => [kind(role), micros]));

console.log(`\nmedians over the rounds; ratios to the Go no-op (no policy: to direct)`);
for (const entry of rows) {
  const summary = summarize(entry);
  const base = entry.label.startsWith('no policy') ? directSummary : goSummary;
  const ratio = (summary.requestsPerSecond / base.requestsPerSecond).toFixed(2);
  console.log(
    `  ${entry.label.padEnd(38)} ${Math.round(summary.requestsPerSecond).toLocaleString('en-US').padStart(7)} req/s (${ratio})   p50 ${summary.p50} ms   p99 ${summary.p99} ms${summary.problems ? `   errors/non-2xx ${summary.problems}` : ''}`,
  );
  const cpu = [...summary.cpu].map(([role, micros]) => {
    const goMicros = goCpu.get(kind(role));
    const versus = goMicros && entry !== go ? ` (${(micros / goMicros).toFixed(2)}×)` : '';
    return `${role} ${Math.round(micros)}${versus}`;
  });
  console.log(`      CPU µs/request: ${cpu.join(', ')}`);
}

// Fixed rate: half of what the Go no-op sustained, where queues stay short and latency is the transport's.
const rate = Math.round(goSummary.requestsPerSecond / 2);
console.log(
  `\nfixed rate ${rate.toLocaleString('en-US')} req/s (half the Go no-op's), 8 connections, ${seconds} s each; load average ${load1()}`,
);
const fixed = new Map<Row, LoadResult>();
for (const entry of rows.slice(0, 5)) fixed.set(entry, await loadAtRate(entry.url, rate, { seconds }));
const directFixed = fixed.get(direct)!;
const goFixed = fixed.get(go)!;
for (const [entry, result] of fixed) {
  const added = result.p99 - directFixed.p99;
  const versusGo =
    entry === direct || entry === go
      ? ''
      : `   vs Go no-op ${added - (goFixed.p99 - directFixed.p99) >= 0 ? '+' : ''}${(added - (goFixed.p99 - directFixed.p99)).toFixed(2)} ms`;
  console.log(
    `  ${entry.label.padEnd(38)} ${Math.round(result.requestsPerSecond).toLocaleString('en-US').padStart(7)} req/s   p50 ${result.p50.toFixed(2)} ms   p99 ${result.p99.toFixed(2)} ms   added p99 ${added.toFixed(2)} ms${versusGo}`,
  );
}
// Issue #32's targets, each from the figures above.
const byLabel = (label: string) => rows.find((entry) => entry.label === label)!;
const passThrough = summarize(byLabel('Envoy + engine pass-through'));
const samplePolicy = byLabel('Envoy + engine, sample inbound policy');
const sample = summarize(samplePolicy);
const cacheHit = summarize(byLabel('Envoy + engine, cache hit'));
const sampleFixed = fixed.get(samplePolicy)!;
const sampleAddedP99 = sampleFixed.p99 - directFixed.p99 - (goFixed.p99 - directFixed.p99);
const engineCpuRatio = (sample.cpu.get('engine (examples/courses)') ?? 0) / (goCpu.get('ext_proc') ?? 1);
const target = (label: string, measured: string, wanted: string, met: boolean) =>
  console.log(
    `  ${label.padEnd(44)} ${measured.padEnd(30)} target ${wanted.padEnd(30)} ${met ? 'met' : 'NOT MET'}`,
  );
console.log('\ntargets (issue #32)');
const ratioTo = (summary: { requestsPerSecond: number }) =>
  summary.requestsPerSecond / goSummary.requestsPerSecond;
target('pass-through vs Go no-op', ratioTo(passThrough).toFixed(2), '≥ 1.0', ratioTo(passThrough) >= 1);
target('sample inbound policy vs Go no-op', ratioTo(sample).toFixed(2), '≥ 0.9', ratioTo(sample) >= 0.9);
target('cache hit vs Go no-op', ratioTo(cacheHit).toFixed(2), '≥ 1.2', ratioTo(cacheHit) >= 1.2);
const holds = sampleFixed.requestsPerSecond >= rate * 0.98;
target(
  'sample policy at the fixed rate',
  `${Math.round(sampleFixed.requestsPerSecond)} of ${rate} req/s, p99 ${sampleAddedP99 >= 0 ? '+' : ''}${sampleAddedP99.toFixed(2)} ms`,
  'holds it, p99 ≤ +1.0 ms over Go',
  holds && sampleAddedP99 <= 1,
);
target(
  'engine CPU per sample request vs Go no-op',
  `${engineCpuRatio.toFixed(2)}×`,
  '≤ 2×',
  engineCpuRatio <= 2,
);
console.log(
  `load average at end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
stopChildren();
