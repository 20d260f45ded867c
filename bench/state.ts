/**
 * Shared state on the request path, each figure next to the direct route (Envoy → backend, no engine) of the same
 * run: (b) rate-limit-by-key with in-process counters, (c) the same with the counters in Redis, (d) a response-cache
 * hit served from Redis, (e) rate-limit-by-key and (f) quota-by-key with the counters in the embedded store
 * (state.dataDir: LMDB, windows unsynced, quotas synced to disk); (p) the engine with no policy, for reference. Needs redis-server
 * (apt-get install -y redis-server). The engines' access log goes to stderr: run with `2>/dev/null` for clean figures.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import {
  formatLoad,
  httpOk,
  type LoadResult,
  load,
  spawnChild,
  startBenchGateway,
  startStaticBackend,
  stopChildren,
  waitFor,
} from './support/stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-state-'));

const redisServer = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
if (redisServer === '') throw new Error('redis-server is not installed (apt-get install -y redis-server)');
const redisPort = await freePort();
spawnChild(redisServer, [
  '--port',
  String(redisPort),
  '--bind',
  '127.0.0.1',
  '--save',
  '',
  '--appendonly',
  'no',
]);
const redisUrl = `redis://127.0.0.1:${redisPort}`;

const backendPort = await freePort();
await startStaticBackend(backendPort);
const backend = `http://127.0.0.1:${backendPort}`;

const POLICIES: Record<string, string> = {
  'limit.xml': `<policies>
  <inbound><base /><rate-limit-by-key calls="1000000000" renewal-period="60" counter-key="@(context.Request.IpAddress)" remaining-calls-header-name="X-Remaining" /></inbound>
  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
</policies>`,
  'quota.xml': `<policies>
  <inbound><base /><quota-by-key calls="1000000000" renewal-period="2592000" counter-key="@(context.Request.IpAddress)" /></inbound>
  <backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>
</policies>`,
  'cached.xml': `<policies>
  <inbound><base /><cache-lookup vary-by-developer="false" vary-by-developer-groups="false" caching-type="external" /></inbound>
  <backend><base /></backend><outbound><base /><cache-store duration="3600" /></outbound><on-error><base /></on-error>
</policies>`,
};

/** One Envoy and one engine process for a gateway configuration; the `direct` API bypasses the engine. */
async function startStack(name: string, state: string): Promise<string> {
  const file = path.join(directory, `${name}.yaml`);
  await writeFile(
    file,
    `${state}
apis:
  - { id: direct, urlSuffix: direct, serviceUrl: "${backend}", operations: [{ method: GET, urlTemplate: /api/Course }] }
  - { id: plain, urlSuffix: plain, serviceUrl: "${backend}", operations: [{ method: GET, urlTemplate: /api/Course }] }
  - id: limited
    urlSuffix: limited
    serviceUrl: "${backend}"
    operations: [{ method: GET, urlTemplate: /api/Course, policy: limit.xml }]
  - id: quota
    urlSuffix: quota
    serviceUrl: "${backend}"
    operations: [{ method: GET, urlTemplate: /api/Course, policy: quota.xml }]
  - id: cached
    urlSuffix: cached
    serviceUrl: "${backend}"
    operations: [{ method: GET, urlTemplate: /api/Course, policy: cached.xml }]
`,
  );
  const url = await startBenchGateway(file, directory, name);
  await waitFor(httpOk(`${url}/limited/api/Course`), `route through the engine (${name})`);
  return url;
}

for (const [name, text] of Object.entries(POLICIES)) await writeFile(path.join(directory, name), text);
const inProcess = await startStack('in-process', '');
const shared = await startStack(
  'redis',
  `state:\n  redis: { url: "${redisUrl}", commandTimeoutMs: 200 }\n  onRedisFailure: { rateLimit: closed }`,
);
await waitFor(httpOk(`${shared}/cached/api/Course`), 'first cache fill');
const embedded = await startStack('embedded', `state:\n  dataDir: ${path.join(directory, 'state')}`);

const ratio = (x: LoadResult, base: LoadResult) => (x.requestsPerSecond / base.requestsPerSecond).toFixed(2);
const directA = await load(`${inProcess}/direct/api/Course`, { seconds });
const plain = await load(`${inProcess}/plain/api/Course`, { seconds });
const memoryLimit = await load(`${inProcess}/limited/api/Course`, { seconds });
const directB = await load(`${shared}/direct/api/Course`, { seconds });
const redisLimit = await load(`${shared}/limited/api/Course`, { seconds });
const redisHit = await load(`${shared}/cached/api/Course`, { seconds });
const directC = await load(`${embedded}/direct/api/Course`, { seconds });
const embeddedLimit = await load(`${embedded}/limited/api/Course`, { seconds });
const embeddedQuota = await load(`${embedded}/quota/api/Course`, { seconds });

console.log(`shared state (1 engine process, Envoy concurrency 1, 32 connections, ${seconds} s each)`);
console.log(formatLoad('  (a) Envoy → backend', directA));
console.log(formatLoad('  (p) engine, no policy', plain));
console.log(`      ratio p/a ${ratio(plain, directA)}   (the engine alone, for reference)`);
console.log(formatLoad('  (b) rate-limit-by-key, in-process', memoryLimit));
console.log(`      ratio b/a ${ratio(memoryLimit, directA)}`);
console.log(formatLoad("  (a') Envoy → backend", directB));
console.log(formatLoad('  (c) rate-limit-by-key, Redis', redisLimit));
console.log(`      ratio c/a' ${ratio(redisLimit, directB)}`);
console.log(formatLoad('  (d) cache hit from Redis', redisHit));
console.log(`      ratio d/a' ${ratio(redisHit, directB)}   (a hit never reaches the backend)`);
console.log(formatLoad("  (a'') Envoy → backend", directC));
console.log(formatLoad('  (e) rate-limit-by-key, embedded', embeddedLimit));
console.log(
  `      ratio e/a'' ${ratio(embeddedLimit, directC)}   (b/a for in-process: ${ratio(memoryLimit, directA)})`,
);
console.log(formatLoad('  (f) quota-by-key, embedded (synced)', embeddedQuota));
console.log(`      ratio f/a'' ${ratio(embeddedQuota, directC)}`);
stopChildren();
