import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedState, openEmbeddedState } from '../../../src/state/embedded.js';
import { EmbeddedEventStream } from '../../../src/state/embedded-event-stream.js';
import { RedisEventStream } from '../../../src/state/event-stream.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';
import { eventStreamSuite } from '../../suites/event-stream.js';

const WORKER = fileURLToPath(new URL('../../processes/event-worker.ts', import.meta.url));

let directory: string;
let embedded: EmbeddedState;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-events-'));
  embedded = openEmbeddedState(directory);
});

afterAll(async () => {
  await embedded?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

eventStreamSuite('embedded', () => ({
  open: (options) => new EmbeddedEventStream(embedded, options),
  // Counted (and trimmed to maxLength) once a tenth of maxLength was appended since the last count.
  trimmedBound: (maxLength) => maxLength + Math.ceil(maxLength / 10),
}));

let redis: RunningRedis;
let connection: RedisConnection;

beforeAll(async () => {
  redis = await startRedis();
  connection = new RedisConnection({
    url: redis.url,
    keyPrefix: 'events:',
    commandTimeoutMs: 500,
    connectTimeoutMs: 1000,
  });
  await connection.ready(5000);
});

afterAll(async () => {
  await connection?.close();
  await redis?.close();
});

eventStreamSuite('redis', () => ({
  open: (options) => new RedisEventStream(connection, options),
  // MAXLEN ~ trims whole radix-tree nodes (100 entries by default).
  trimmedBound: (maxLength) => maxLength + 200,
}));

/** Runs the event worker as its own process; resolves once its events are written. */
function worker(stream: string, name: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', WORKER, directory, stream, name, String(count)],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`event worker exited with ${code}`)),
    );
  });
}

describe('embedded event stream', () => {
  const audit = (stream: string, maxLength = 1000) => new Map([['audit', { stream, maxLength }]]);

  it('keeps its entries when the store is closed and opened again (a restart)', async () => {
    const first = openEmbeddedState(directory);
    const before = new EmbeddedEventStream(first, { targets: audit('restart'), bufferSize: 10 });
    before.send({ loggerId: 'audit', message: 'before the restart', partitionKey: 'k' });
    await before.close();
    await first.close();

    const second = openEmbeddedState(directory);
    try {
      const after = new EmbeddedEventStream(second, { targets: audit('restart'), bufferSize: 10 });
      after.send({ loggerId: 'audit', message: 'after the restart' });
      await after.close();
      const events = await after.read('audit', { limit: 10 });
      expect(events.map((event) => [event.message, event.partitionKey])).toEqual([
        ['before the restart', 'k'],
        ['after the restart', undefined],
      ]);
    } finally {
      await second.close();
    }
  });

  it('ids keep increasing when the clock steps back: the last millisecond stays, its seq counts on', async () => {
    let now = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
    const stream = new EmbeddedEventStream(embedded, { targets: audit('clock'), bufferSize: 10 }, () => now);
    stream.send({ loggerId: 'audit', message: 'a' });
    stream.send({ loggerId: 'audit', message: 'b' });
    await stream.flush();
    now -= 5000;
    stream.send({ loggerId: 'audit', message: 'c' });
    await stream.flush();
    now += 10_000;
    stream.send({ loggerId: 'audit', message: 'd' });
    await stream.close();
    const ms = Date.UTC(2026, 0, 1, 12, 0, 0, 500);
    expect((await stream.read('audit', { limit: 10 })).map((event) => [event.id, event.message])).toEqual([
      [`${ms}-0`, 'a'],
      [`${ms}-1`, 'b'],
      [`${ms}-2`, 'c'],
      [`${ms + 5000}-0`, 'd'],
    ]);
  });

  it('trims a long stream to at most a tenth over maxLength, keeping the newest', async () => {
    const stream = new EmbeddedEventStream(embedded, { targets: audit('long', 1000), bufferSize: 5000 });
    let maxSeen = 0;
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 370; i++) stream.send({ loggerId: 'audit', message: `e${round * 370 + i}` });
      await stream.flush();
      maxSeen = Math.max(maxSeen, (await stream.read('audit', { limit: 5000 })).length);
    }
    await stream.close();
    const events = await stream.read('audit', { limit: 5000 });
    expect(events.length).toBeGreaterThanOrEqual(1000);
    expect(maxSeen).toBeLessThanOrEqual(1100);
    expect(events.at(-1)!.message).toBe('e3699');
    // What is kept is the newest, with nothing missing in between.
    const first = Number(events[0]!.message.slice(1));
    expect(events.map((event) => event.message)).toEqual(
      Array.from({ length: events.length }, (_, i) => `e${first + i}`),
    );
  });

  it('two processes appending to one stream: every event kept once, ids unique, each process in its order', async () => {
    await Promise.all([worker('shared', 'left', 300), worker('shared', 'right', 300)]);
    const reader = new EmbeddedEventStream(embedded, { targets: audit('shared', 100_000), bufferSize: 1 });
    const events = await reader.read('audit', { limit: 1000 });
    expect(events).toHaveLength(600);
    expect(new Set(events.map((event) => event.id)).size).toBe(600);
    for (const name of ['left', 'right'])
      expect(events.filter((event) => event.message.startsWith(name)).map((event) => event.message)).toEqual(
        Array.from({ length: 300 }, (_, i) => `${name} ${i}`),
      );
  });
});
