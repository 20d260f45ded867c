/**
 * The same small GET (a) through Envoy straight to the backend, (b) through Envoy + the engine passing through,
 * over TCP, and (c) the same as (b) with the engine on a Unix domain socket (`portcullis engine --socket`, as a
 * sidecar beside its Envoy), each behind its own Envoy (concurrency 1), measured in interleaved rounds of one run;
 * prints the medians' requests/s, p50/p99, CPU per request, and the ratios b/a, c/a and c/b.
 * BENCH_SECONDS (per row and round, default 8), BENCH_ROUNDS (default 3), BENCH_ENGINES (TCP engines, default 1).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import {
  formatCpu,
  formatLoad,
  interleavedMedians,
  type LoadResult,
  startBenchEnvoy,
  startEngineOnSocket,
  startEngineProcess,
  startStaticBackend,
  stopChildren,
} from './support/stack.js';

const engineProcesses = Number(process.env.BENCH_ENGINES ?? 1);
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

const backendPort = await freePort();
const backend = `http://127.0.0.1:${backendPort}`;
const enginePorts = await Promise.all(Array.from({ length: engineProcesses }, () => freePort()));
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-'));
const socketPath = path.join(directory, 'engine.sock');

await startStaticBackend(backendPort);
await Promise.all(enginePorts.map((port) => startEngineProcess(port)));
await startEngineOnSocket(socketPath, undefined, 'engine (uds)');

const gateway = await startBenchEnvoy({
  enginePorts,
  directory,
  apis: [
    { id: 'direct', urlSuffix: 'direct', serviceUrl: backend },
    { id: 'engine', urlSuffix: 'engine', serviceUrl: backend },
  ],
});
const socketGateway = await startBenchEnvoy({
  enginePorts: [],
  engineSocket: socketPath,
  directory,
  name: 'uds',
  role: 'envoy (uds)',
  apis: [{ id: 'engine', urlSuffix: 'engine', serviceUrl: backend }],
});

const rows = [
  { label: '  (a) Envoy → backend', url: `${gateway}/direct/api/Course` },
  {
    label: '  (b) Envoy + engine (TCP) → backend',
    url: `${gateway}/engine/api/Course`,
  },
  {
    label: '  (c) Envoy + engine (UDS) → backend',
    url: `${socketGateway}/engine/api/Course`,
  },
];
const [a, b, c] = (await interleavedMedians(rows, { rounds, seconds })) as [
  LoadResult,
  LoadResult,
  LoadResult,
];
console.log(
  `passthrough (${engineProcesses} TCP engine process${engineProcesses > 1 ? 'es' : ''} and 1 on a socket, Envoy concurrency 1, 32 connections, ${rounds} interleaved rounds of ${seconds} s, medians)`,
);
for (const [row, result] of [
  [rows[0]!, a],
  [rows[1]!, b],
  [rows[2]!, c],
] as const) {
  console.log(formatLoad(row.label, result));
  console.log(formatCpu(result));
}
const ratio = (x: LoadResult, y: LoadResult) => (x.requestsPerSecond / y.requestsPerSecond).toFixed(2);
console.log(
  `  ratio b/a ${ratio(b, a)}   (target ≥ 0.85)   c/a ${ratio(c, a)}   c/b (UDS over TCP) ${ratio(c, b)}`,
);
stopChildren();
