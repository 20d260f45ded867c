/**
 * A request sent by `set-backend-service` (a) to a single named backend and (b) to a load-balanced pool of three
 * backends (priority groups, weights, a circuit breaker on each: the AI gateway's pattern, docs/backends.md), through
 * the same Envoy (concurrency 1) and engine, in interleaved rounds of one run. The pool's extra work per request is
 * the engine's choice (one breaker read per candidate, in-process state) and the response phase the breakers watch;
 * prints the medians' requests/s, p50/p99, CPU per request and the ratio b/a.
 * BENCH_SECONDS (per row and round, default 8), BENCH_ROUNDS (default 3). The engine's access log goes to stderr: run
 * with `2>/dev/null` for clean figures.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import {
  formatCpu,
  formatLoad,
  interleavedMedians,
  type LoadResult,
  startBenchGateway,
  startStaticBackend,
  stopChildren,
} from './support/stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

const ports = [await freePort(), await freePort(), await freePort()];
await Promise.all(ports.map((port) => startStaticBackend(port)));
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-pool-'));
const breaker =
  '{ rules: [{ failureCondition: { count: 3, interval: PT1M, statusCodeRanges: [{ min: 429, max: 429 }, { min: 500, max: 599 }] }, tripDuration: PT1M, acceptRetryAfter: true }] }';
const policy = (backendId: string) =>
  `<policies><inbound><base /><set-backend-service backend-id="${backendId}" /></inbound><backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error></policies>`;
const configFile = path.join(directory, 'gateway.yaml');
await writeFile(
  configFile,
  `backends:
  - { id: single, url: "http://127.0.0.1:${ports[0]}" }
${ports.map((port, index) => `  - { id: member-${index}, url: "http://127.0.0.1:${port}", circuitBreaker: ${breaker} }`).join('\n')}
  - id: pool
    type: pool
    pool:
      services:
        - { id: member-0, priority: 1, weight: 3 }
        - { id: member-1, priority: 1, weight: 1 }
        - { id: member-2, priority: 2 }
apis:
  - id: single
    urlSuffix: single
    serviceUrl: "http://127.0.0.1:${ports[0]}"
    policy: '${policy('single')}'
    operations: [{ id: get, method: GET, urlTemplate: "/api/Course" }]
  - id: pool
    urlSuffix: pool
    serviceUrl: "http://127.0.0.1:${ports[0]}"
    policy: '${policy('pool')}'
    operations: [{ id: get, method: GET, urlTemplate: "/api/Course" }]
`,
);
const gateway = await startBenchGateway(configFile, directory);

const rows = [
  {
    label: '  (a) set-backend-service → single backend',
    url: `${gateway}/single/api/Course`,
  },
  {
    label: '  (b) set-backend-service → pool of 3',
    url: `${gateway}/pool/api/Course`,
  },
];
const [a, b] = (await interleavedMedians(rows, { rounds, seconds })) as [LoadResult, LoadResult];
console.log(
  `backend pool (1 engine process, in-process state, Envoy concurrency 1, 32 connections, ${rounds} interleaved rounds of ${seconds} s, medians)`,
);
for (const [row, result] of [
  [rows[0]!, a],
  [rows[1]!, b],
] as const) {
  console.log(formatLoad(row.label, result));
  console.log(formatCpu(result));
}
console.log(`  ratio b/a ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(2)}`);
stopChildren();
