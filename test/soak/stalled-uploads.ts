/**
 * `npm run soak` (issue 29.1): stalled and abandoned uploads against a real Envoy and the real engine, to show that
 * no client behaviour brings Envoy down. Uploads of 1 KiB … 1 MiB (and one over the body limit), to an operation
 * whose policy reads the body and to one that streams it, over HTTP/1.1 (chunked and with a declared length) and
 * HTTP/2, each stalled mid-body and then ended by the client after a hold, by the stream idle timeout, or by the
 * request deadline. At the end each Envoy must still be the process that started (nothing here restarts one), with
 * no crash in its log, nothing still open, and still serving.
 *
 * The holds reach past 50 s, where Envoy 1.40 crashed before the fix. `-- --idle-seconds 300` uses the default idle
 * timeout (a run of about six minutes); the default, 70 s, keeps a run near two minutes.
 */
import { parseArgs } from 'node:util';
import { type StalledUpload, stalledUpload } from '../doubles/stalled-upload.js';
import { startBodyGateway } from '../processes/body-gateway.js';
import type { GatewayStack } from '../processes/gateway.js';
import { elapse } from '../processes/wait.js';

const { values } = parseArgs({
  options: {
    'idle-seconds': { type: 'string', default: '70' },
    'deadline-seconds': { type: 'string', default: '20' },
  },
});
const idleMs = Number(values['idle-seconds']) * 1000;
const deadlineMs = Number(values['deadline-seconds']) * 1000;
const kibibyte = 1024;
const limit = 1024 * kibibyte;
const sizes = [
  kibibyte,
  64 * kibibyte,
  300 * kibibyte,
  600 * kibibyte,
  limit - kibibyte,
  limit + 64 * kibibyte,
];
const holdsMs = [1000, 5000, 20_000, 45_000, 55_000].filter((hold) => hold < idleMs);
const paths = ['/body/upper', '/body/stream'];
const framings = [
  { protocol: 'http1', chunked: true },
  { protocol: 'http1', chunked: false },
  { protocol: 'http2', chunked: true },
] as const;

// One gateway for the idle timeout (no deadline) and one whose deadline comes long before its idle timeout.
const idleGateway = await startBodyGateway(
  `maxRequestBodyBytes: ${limit}, streamIdleTimeoutMs: ${idleMs}, requestTimeoutMs: 0`,
);
const deadlineGateway = await startBodyGateway(
  `maxRequestBodyBytes: ${limit}, streamIdleTimeoutMs: 300000, requestTimeoutMs: ${deadlineMs}`,
);
const stacks = [idleGateway, deadlineGateway];

type Ending = 'client' | 'idle timeout' | 'deadline';
const outcomes = new Map<string, number>();
const count = (ending: Ending, status: number) => {
  const key = `${ending} → ${status || 'reset'}`;
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
};

async function run(stack: GatewayStack, ending: Ending, holdMs?: number): Promise<void> {
  const uploads: StalledUpload[] = [];
  for (const path of paths)
    for (const bytes of sizes)
      for (const framing of framings) uploads.push(stalledUpload(stack.url, path, { ...framing, bytes }));
  await Promise.all(
    uploads.map(async (upload) => {
      if (holdMs !== undefined) {
        // Over the body limit, the 413 can come before the hold is over.
        await Promise.race([elapse(holdMs), upload.settled]);
        count(ending, upload.status());
      } else count(ending, await upload.settled);
      upload.abandon();
    }),
  );
}

const started = Date.now();
console.log(
  `soak: ${sizes.length} sizes × ${paths.length} operations × ${framings.length} framings, held ` +
    `${holdsMs.map((hold) => `${hold / 1000} s`).join(', ')} then abandoned; idle timeout ${idleMs / 1000} s; ` +
    `deadline ${deadlineMs / 1000} s`,
);
await Promise.all([
  ...holdsMs.map((hold) => run(idleGateway, 'client', hold)),
  run(idleGateway, 'idle timeout'),
  run(deadlineGateway, 'deadline'),
]);
// Let Envoy tear down whatever the last endings left, then look.
await elapse(2000);

let failed = false;
for (const [index, stack] of stacks.entries()) {
  const name = index === 0 ? 'idle-timeout gateway' : 'deadline gateway';
  const crashed = stack.envoy.log().includes('Segmentation fault');
  const active = await stack.envoy.stats('downstream_rq_active').then(
    (stats) => stats.get('http.ingress_http.downstream_rq_active'),
    () => undefined,
  );
  const engineStreams = stack.engine.activeStreams();
  const serving = await fetch(`${stack.url}/body/upper`, { method: 'POST', body: 'ok' }).then(
    (response) => response.status,
    () => 0,
  );
  const ok = !crashed && stack.envoy.running() && active === 0 && engineStreams === 0 && serving === 200;
  failed ||= !ok;
  console.log(
    `${name}: envoy ${stack.envoy.running() ? 'alive (nothing here restarts it)' : 'GONE'}` +
      `${crashed ? `, CRASHED (${/Caught Segmentation fault[^\n]*/.exec(stack.envoy.log())?.[0]})` : ''}; ` +
      `active requests ${active ?? 'unknown'}; engine streams open ` +
      `${engineStreams}; a new request → ${serving}`,
  );
}
console.log(
  `outcomes: ${[...outcomes].map(([key, n]) => `${key} ×${n}`).join('; ')}; ` +
    `${Math.round((Date.now() - started) / 1000)} s`,
);
console.log(failed ? 'soak: FAILED' : 'soak: passed');
await Promise.all(stacks.map((stack) => stack.stop()));
process.exit(failed ? 1 : 0);
