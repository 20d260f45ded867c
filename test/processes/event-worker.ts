/**
 * A process that appends to a stream of the embedded store, for tests of several processes sharing one data
 * directory: `node --import tsx event-worker.ts DIR STREAM NAME COUNT` sends COUNT events `NAME i` in batches of
 * 16 (so the writers of two processes interleave), then exits once they are written.
 */

import { openEmbeddedState } from '../../src/state/embedded.js';
import { EmbeddedEventStream } from '../../src/state/embedded-event-stream.js';

const [directory, stream, name, count] = process.argv.slice(2);
const state = openEmbeddedState(directory!);
const events = new EmbeddedEventStream(state, {
  targets: new Map([['audit', { stream: stream!, maxLength: 100_000 }]]),
  bufferSize: 100_000,
  batchSize: 16,
});
for (let i = 0; i < Number(count); i++) events.send({ loggerId: 'audit', message: `${name} ${i}` });
await events.close();
if (events.sent !== Number(count)) throw new Error(`${events.sent} of ${count} events written`);
await state.close();
