import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedState, openEmbeddedState } from '../../../src/state/embedded.js';
import { EmbeddedLimitStore } from '../../../src/state/embedded-limits.js';
import { StateUnavailableError } from '../../../src/state/limits.js';
import { MemoryLimitStore } from '../../../src/state/memory-limits.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import { RedisLimitStore } from '../../../src/state/redis-limits.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';
import { elapse, until } from '../../processes/wait.js';
import { limitStoreSuite } from '../../suites/limit-store.js';

let unique = 0;
const key = (name: string) => `${name}-${process.pid}-${++unique}`;

limitStoreSuite('in-process', () => {
  let now = Date.UTC(2025, 0, 1, 12, 0, 0, 250);
  const store = new MemoryLimitStore(() => now);
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

// The embedded store on a fake clock; the sibling is a second LMDB environment on the same directory, as a
// second engine process opens it.
let directory: string;
let embedded: EmbeddedState;
let siblingState: EmbeddedState;
let embeddedNow = Date.UTC(2025, 0, 1, 12, 0, 0, 250);

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-limits-'));
  embedded = openEmbeddedState(directory);
  siblingState = openEmbeddedState(directory);
});

afterAll(async () => {
  await embedded?.close();
  await siblingState?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

limitStoreSuite(
  'embedded',
  () => ({
    store: new EmbeddedLimitStore(embedded, () => embeddedNow),
    advance: async (ms) => {
      embeddedNow += ms;
    },
    sibling: () => new EmbeddedLimitStore(siblingState, () => embeddedNow),
  }),
  true,
);

let redis: RunningRedis;
let connection: RedisConnection;
let redisStore: RedisLimitStore;

beforeAll(async () => {
  redis = await startRedis();
  connection = new RedisConnection({
    url: redis.url,
    keyPrefix: 'test:',
    commandTimeoutMs: 500,
    connectTimeoutMs: 1000,
  });
  await connection.ready(5000);
  redisStore = new RedisLimitStore(connection);
});

afterAll(async () => {
  await connection?.close();
  await redis?.close();
});

let siblingConnection: RedisConnection | undefined;
afterAll(async () => {
  await siblingConnection?.close();
});

limitStoreSuite(
  'redis',
  () => ({
    store: redisStore,
    // Redis keeps its own clock: letting a window pass means letting the time pass.
    advance: elapse,
    sibling: async () => {
      siblingConnection ??= new RedisConnection({
        url: redis.url,
        keyPrefix: 'test:',
        commandTimeoutMs: 500,
        connectTimeoutMs: 1000,
      });
      await siblingConnection.ready(5000);
      return new RedisLimitStore(siblingConnection);
    },
  }),
  true,
);

describe('redis: keys and failures', () => {
  it('keeps its counters under the prefix with an expiry', async () => {
    const k = key('prefix');
    await redisStore.slidingWindow({ key: k, limit: 5, periodSeconds: 60, amount: 2, mode: 'consume' });
    const ttl = Number(redis.cli('PTTL', `test:rl:${k}`).trim());
    expect(ttl).toBeGreaterThan(59_000);
    expect(ttl).toBeLessThanOrEqual(61_000);
  });

  it('two connections (two engine processes) share one count, atomically', async () => {
    const other = new RedisConnection({
      url: redis.url,
      keyPrefix: 'test:',
      commandTimeoutMs: 500,
      connectTimeoutMs: 1000,
    });
    await other.ready(5000);
    const second = new RedisLimitStore(other);
    const k = key('shared');
    const calls = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? redisStore : second).slidingWindow({
          key: k,
          limit: 25,
          periodSeconds: 60,
          amount: 1,
          mode: 'consume',
        }),
      ),
    );
    await other.close();
    expect(calls.filter((r) => r.allowed)).toHaveLength(25);
  });

  it('a paused Redis fails within the command timeout; an unreachable one at once', async () => {
    const slow = new RedisConnection({
      url: redis.url,
      keyPrefix: 'test:',
      commandTimeoutMs: 150,
      connectTimeoutMs: 500,
    });
    await slow.ready(5000);
    const store = new RedisLimitStore(slow);
    redis.pause();
    try {
      const started = Date.now();
      const failure = await store
        .slidingWindow({ key: key('slow'), limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(StateUnavailableError);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      redis.resume();
      await slow.close();
    }

    const nowhere = new RedisConnection({
      url: 'redis://127.0.0.1:1',
      keyPrefix: 'test:',
      commandTimeoutMs: 150,
      connectTimeoutMs: 200,
    });
    await until(() => !nowhere.available, 'the refused connection to be noticed', {
      timeoutMs: 2000,
      everyMs: 10,
    });
    const started = Date.now();
    const refused = await new RedisLimitStore(nowhere).acquire('x', 1, 1).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(StateUnavailableError);
    expect(Date.now() - started).toBeLessThan(300);
    await nowhere.close();
  });
});
