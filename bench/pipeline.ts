/**
 * Policies on the request path, each next to the direct route (Envoy → backend, ext_proc disabled on the route) of
 * the same run: (b) the spec's sample inbound policy (test/unit/policy/fixtures/spec-course-api.xml, inbound part:
 * set-variable, three choose blocks with rewrite-uri and set-backend-service), (c) a cache hit (cache-lookup /
 * cache-store in the engine's memory, served without the backend). The engine runs as `portcullis engine --config`;
 * its access log goes to stderr: run with `2>/dev/null` for clean figures.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import {
  formatCpu,
  formatLoad,
  httpOk,
  type LoadResult,
  load,
  root,
  startBenchGateway,
  startStaticBackend,
  stopChildren,
  waitFor,
} from './support/stack.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-bench-pipeline-'));

const backendPort = await freePort();
await startStaticBackend(backendPort);
const backend = `http://127.0.0.1:${backendPort}`;

// The spec sample's inbound section, with the other sections inherited (outbound would turn every 200 into a 401).
const fixture = await readFile(
  path.join(root, 'test', 'unit', 'policy', 'fixtures', 'spec-course-api.xml'),
  'utf8',
);
const inbound = /<inbound>[\s\S]*?<\/inbound>/.exec(fixture)?.[0];
if (inbound === undefined) throw new Error('spec-course-api.xml has no inbound section');
await writeFile(
  path.join(directory, 'sample.xml'),
  `<policies>\n${inbound}\n<backend><base /></backend><outbound><base /></outbound><on-error><base /></on-error>\n</policies>`,
);
await writeFile(
  path.join(directory, 'cached.xml'),
  `<policies>
  <inbound><base /><cache-lookup vary-by-developer="false" vary-by-developer-groups="false" downstream-caching-type="none" caching-type="internal" /></inbound>
  <backend><base /></backend><outbound><base /><cache-store duration="120" /></outbound><on-error><base /></on-error>
</policies>`,
);

const file = path.join(directory, 'gateway.yaml');
await writeFile(
  file,
  `namedValues:
  customer-key: { value: "k-123", secret: true }
  bulk-backend: "${backend}"
apis:
  - { id: direct, urlSuffix: direct, serviceUrl: "${backend}", operations: [{ method: GET, urlTemplate: /api/Course }] }
  - id: sample
    urlSuffix: sample
    serviceUrl: "${backend}"
    policy: sample.xml
    operations: [{ method: GET, urlTemplate: /api/Course }, { method: GET, urlTemplate: "/api/Course/{id}" }]
  - id: cached
    urlSuffix: cached
    serviceUrl: "${backend}"
    operations: [{ method: GET, urlTemplate: /api/Course, policy: cached.xml }]
`,
);

const url = await startBenchGateway(file, directory);
// The sample policy rewrites `?courseID=7` to /api/Course/7: the measured request takes that branch.
const sampleUrl = `${url}/sample/api/Course?courseID=7`;
await waitFor(httpOk(sampleUrl), 'route through the engine');
await waitFor(httpOk(`${url}/cached/api/Course`), 'first cache fill');

const ratio = (x: LoadResult, base: LoadResult) => (x.requestsPerSecond / base.requestsPerSecond).toFixed(2);
const a = await load(`${url}/direct/api/Course`, { seconds });
const b = await load(sampleUrl, { seconds });
const c = await load(`${url}/cached/api/Course`, { seconds });

console.log(`policy pipeline (1 engine process, Envoy concurrency 1, 32 connections, ${seconds} s each)`);
console.log(formatLoad('  (a) Envoy → backend', a));
console.log(formatCpu(a));
console.log(formatLoad('  (b) spec sample inbound policy', b));
console.log(formatCpu(b));
console.log(`      ratio b/a ${ratio(b, a)}   (target ≥ 0.7)`);
console.log(formatLoad('  (c) cache hit', c));
console.log(formatCpu(c));
console.log(`      ratio c/a ${ratio(c, a)}   (target ≥ 1.0; a hit never reaches the backend)`);
stopChildren();
