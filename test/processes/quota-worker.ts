/**
 * A process that counts on the embedded store, for tests of several processes sharing one data directory:
 * `node --import tsx quota-worker.ts DIR KEY CALLS LIMIT` makes CALLS concurrent quota calls against a limit of
 * LIMIT and prints how many were admitted.
 */
import { openEmbeddedState } from '../../src/state/embedded.js';
import { EmbeddedLimitStore } from '../../src/state/embedded-limits.js';

const [directory, key, calls, limit] = process.argv.slice(2);
const state = openEmbeddedState(directory!);
const store = new EmbeddedLimitStore(state);
const results = await Promise.all(
  Array.from({ length: Number(calls) }, () =>
    store.quota({
      key: key!,
      periodSeconds: 0,
      originMs: 0,
      callLimit: Number(limit),
      kilobyteLimit: undefined,
      calls: 1,
      bytes: 0,
      mode: 'consume',
    }),
  ),
);
console.log(results.filter((result) => result.allowed).length);
await state.close();
