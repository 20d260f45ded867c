/**
 * A streamed chat completion (server-sent events with `include_usage`) through Envoy and the engine, (a) on an API
 * without policy, (b) on one with llm-token-limit (prompt estimated with the tokenizer, the request body read, the
 * answer watched chunk by chunk through ext_proc STREAMED mode, usage counted at its end) — behind the same Envoy,
 * in interleaved rounds of one run; prints the medians' requests/s, p50/p99, CPU per request and the ratio b/a.
 * BENCH_SECONDS (per row and round, default 8), BENCH_ROUNDS (default 3), BENCH_CHUNKS (events per answer, 20).
 * The engine's access log goes to stderr: run with `2>/dev/null` for clean figures.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import {
  formatCpu,
  formatLoad,
  type LoadResult,
  load,
  startBenchGateway,
  startSseBackend,
  stopChildren,
  waitFor,
} from './support/stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const chunks = Number(process.env.BENCH_CHUNKS ?? 20);
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-llm-'));

const backendPort = await freePort();
await startSseBackend(backendPort, chunks);
const backend = `http://127.0.0.1:${backendPort}/v1`;

await writeFile(
  path.join(directory, 'limited.xml'),
  `<policies>
  <inbound><base />
    <llm-token-limit counter-key="@(context.Request.IpAddress)" tokens-per-minute="1000000000" estimate-prompt-tokens="true"
        remaining-tokens-header-name="x-remaining-tokens" />
  </inbound>
  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
</policies>`,
);
const file = path.join(directory, 'gateway.yaml');
await writeFile(
  file,
  `apis:
  - { id: plain, urlSuffix: plain, serviceUrl: "${backend}", operations: [{ method: POST, urlTemplate: /chat/completions }] }
  - id: limited
    urlSuffix: limited
    serviceUrl: "${backend}"
    policy: limited.xml
    operations: [{ method: POST, urlTemplate: /chat/completions }]
`,
);
const url = await startBenchGateway(file, directory);

const body = JSON.stringify({
  model: 'gpt-4o',
  stream: true,
  stream_options: { include_usage: true },
  messages: [
    { role: 'system', content: 'You are a helpful assistant that answers briefly.' },
    { role: 'user', content: 'Explain in one paragraph what an API gateway does.' },
  ],
});
const request = { method: 'POST' as const, body, headers: { 'content-type': 'application/json' } };
const streamed = (target: string) => async () => {
  const response = await fetch(target, { method: 'POST', body, headers: request.headers });
  return response.ok && (await response.text()).includes('[DONE]');
};

const rows = [
  {
    label: '  (a) streamed completion, no policy',
    url: `${url}/plain/chat/completions`,
    results: [] as LoadResult[],
  },
  {
    label: '  (b) streamed completion, llm-token-limit',
    url: `${url}/limited/chat/completions`,
    results: [] as LoadResult[],
  },
];
for (const row of rows) await waitFor(streamed(row.url), row.label.trim());
for (let round = 0; round < rounds; round++)
  for (const row of rows) row.results.push(await load(row.url, { seconds, ...request }));

const medianRun = (results: LoadResult[]) =>
  [...results].sort((x, y) => x.requestsPerSecond - y.requestsPerSecond)[Math.floor(results.length / 2)]!;
const [a, b] = rows.map((row) => medianRun(row.results)) as [LoadResult, LoadResult];
console.log(
  `llm streaming (1 engine process, Envoy concurrency 1, 32 connections, ${chunks + 2} events per answer, ${rounds} interleaved rounds of ${seconds} s, medians)`,
);
console.log(formatLoad(rows[0]!.label, a));
console.log(formatCpu(a));
console.log(formatLoad(rows[1]!.label, b));
console.log(formatCpu(b));
console.log(`      ratio b/a ${(b.requestsPerSecond / a.requestsPerSecond).toFixed(2)}`);
stopChildren();
