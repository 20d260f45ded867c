/**
 * The same small GET (a) through Envoy straight to the backend and (b) through Envoy + the engine passing through,
 * measured in one run; prints requests/s, p50/p99 and the ratio b/a.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import {
  formatCpu,
  formatLoad,
  httpOk,
  load,
  startBenchEnvoy,
  startEngineProcess,
  startStaticBackend,
  stopChildren,
  waitFor,
} from './support/stack.js';

const engineProcesses = Number(process.env.BENCH_ENGINES ?? 1);
const seconds = Number(process.env.BENCH_SECONDS ?? 8);

const backendPort = await freePort();
const enginePorts = await Promise.all(Array.from({ length: engineProcesses }, () => freePort()));

await startStaticBackend(backendPort);
await Promise.all(enginePorts.map((port) => startEngineProcess(port)));

const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-'));
const gateway = await startBenchEnvoy({
  enginePorts,
  directory,
  apis: [
    { id: 'direct', urlSuffix: 'direct', serviceUrl: `http://127.0.0.1:${backendPort}` },
    { id: 'engine', urlSuffix: 'engine', serviceUrl: `http://127.0.0.1:${backendPort}` },
  ],
});
await waitFor(httpOk(`${gateway}/engine/api/Course`), 'route through the engine');

const a = await load(`${gateway}/direct/api/Course`, { seconds });
const b = await load(`${gateway}/engine/api/Course`, { seconds });
console.log(
  `passthrough (${engineProcesses} engine process${engineProcesses > 1 ? 'es' : ''}, Envoy concurrency 1, 32 connections, ${seconds} s each)`,
);
console.log(formatLoad('  (a) Envoy → backend', a));
console.log(formatCpu(a));
console.log(formatLoad('  (b) Envoy + engine → backend', b));
console.log(formatCpu(b));
console.log(`  ratio b/a ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(2)}   (target ≥ 0.85)`);
stopChildren();
