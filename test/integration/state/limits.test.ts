import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LimitStore, StateUnavailableError } from '../../../src/state/limits.js';
import { MemoryLimitStore } from '../../../src/state/memory-limits.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import { RedisLimitStore } from '../../../src/state/redis-limits.js';
import { type RunningRedis, startRedis } from '../../helpers/redis.js';
import { elapse, until } from '../../helpers/wait.js';

/**
 * One specification for both backends. The in-process store runs on a fake clock; the Redis store on Redis's own
 * clock, so its cases use fresh keys, periods long enough not to roll over while a case runs, and (for
 * expiry) real waits of about a second.
 */
interface Backend {
  store: LimitStore;
  /** Moves time forward (fake clock) or waits (Redis). */
  advance(ms: number): Promise<void>;
}

let unique = 0;
const key = (name: string) => `${name}-${process.pid}-${++unique}`;

function limitSuite(name: string, backend: () => Backend) {
  describe(`${name}: sliding window`, () => {
    it('admits exactly `limit` calls, then refuses with the remaining count at 0', async () => {
      const { store } = backend();
      const k = key('sw');
      const results = [];
      for (let i = 0; i < 5; i++)
        results.push(
          await store.slidingWindow({ key: k, limit: 3, periodSeconds: 60, amount: 1, mode: 'consume' }),
        );
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, false, false]);
      expect(results.map((r) => r.remaining)).toEqual([2, 1, 0, 0, 0]);
      expect(results[3]!.used).toBe(3);
      // The first call leaves the window 60 s (plus at most its one-second bucket) after it was made.
      expect(results[3]!.retryAfterSeconds).toBeGreaterThanOrEqual(59);
      expect(results[3]!.retryAfterSeconds).toBeLessThanOrEqual(61);
    });

    it('counts increment-count at once and refuses an amount that does not fit', async () => {
      const { store } = backend();
      const k = key('amount');
      const first = await store.slidingWindow({
        key: k,
        limit: 10,
        periodSeconds: 60,
        amount: 7,
        mode: 'consume',
      });
      expect(first).toMatchObject({ allowed: true, used: 7, remaining: 3 });
      const second = await store.slidingWindow({
        key: k,
        limit: 10,
        periodSeconds: 60,
        amount: 4,
        mode: 'consume',
      });
      expect(second).toMatchObject({ allowed: false, used: 7, remaining: 3 });
      const third = await store.slidingWindow({
        key: k,
        limit: 10,
        periodSeconds: 60,
        amount: 3,
        mode: 'consume',
      });
      expect(third).toMatchObject({ allowed: true, used: 10, remaining: 0 });
    });

    it('check does not count; add counts past the limit', async () => {
      const { store } = backend();
      const k = key('modes');
      const check = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'check',
      });
      expect(check).toMatchObject({ allowed: true, used: 0, remaining: 1 });
      await store.slidingWindow({ key: k, limit: 1, periodSeconds: 60, amount: 1, mode: 'add' });
      const added = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'add',
      });
      expect(added).toMatchObject({ allowed: true, used: 2, remaining: 0 });
      const refused = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'check',
      });
      expect(refused.allowed).toBe(false);
    });

    it('keys are independent', async () => {
      const { store } = backend();
      const a = key('a');
      const b = key('b');
      await store.slidingWindow({ key: a, limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' });
      const other = await store.slidingWindow({
        key: b,
        limit: 1,
        periodSeconds: 60,
        amount: 1,
        mode: 'consume',
      });
      expect(other.allowed).toBe(true);
    });

    it('admits again once the calls have left the window', async () => {
      const { store, advance } = backend();
      const k = key('slide');
      expect(
        (await store.slidingWindow({ key: k, limit: 1, periodSeconds: 1, amount: 1, mode: 'consume' }))
          .allowed,
      ).toBe(true);
      const refused = await store.slidingWindow({
        key: k,
        limit: 1,
        periodSeconds: 1,
        amount: 1,
        mode: 'consume',
      });
      expect(refused.allowed).toBe(false);
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(2);
      await advance(refused.retryAfterSeconds * 1000 + 50);
      expect(
        (await store.slidingWindow({ key: k, limit: 1, periodSeconds: 1, amount: 1, mode: 'consume' }))
          .allowed,
      ).toBe(true);
    });
  });

  describe(`${name}: quota (fixed windows)`, () => {
    it('counts calls in a window and says when it renews', async () => {
      const { store } = backend();
      const k = key('quota');
      const request = {
        key: k,
        periodSeconds: 3600,
        originMs: Date.UTC(2000, 0, 1),
        callLimit: 2,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume' as const,
      };
      const results = [await store.quota(request), await store.quota(request), await store.quota(request)];
      expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
      expect(results[2]).toMatchObject({ exceeded: 'calls', calls: 2 });
      expect(results[2]!.renewsInSeconds).toBeGreaterThanOrEqual(1);
      expect(results[2]!.renewsInSeconds).toBeLessThanOrEqual(3600);
    });

    it('refuses on bandwidth once the bytes counted reach the limit', async () => {
      const { store } = backend();
      const k = key('bandwidth');
      const base = {
        key: k,
        periodSeconds: 3600,
        originMs: 0,
        callLimit: undefined,
        kilobyteLimit: 2,
        calls: 1,
        bytes: 0,
      };
      expect((await store.quota({ ...base, mode: 'check' })).allowed).toBe(true);
      await store.quota({ ...base, calls: 0, bytes: 2047, mode: 'add' });
      expect((await store.quota({ ...base, mode: 'check' })).allowed).toBe(true);
      await store.quota({ ...base, calls: 0, bytes: 1, mode: 'add' });
      const refused = await store.quota({ ...base, mode: 'check' });
      expect(refused).toMatchObject({ allowed: false, exceeded: 'bandwidth', bytes: 2048 });
    });

    it('a renewal period of 0 never renews', async () => {
      const { store } = backend();
      const request = {
        key: key('forever'),
        periodSeconds: 0,
        originMs: 0,
        callLimit: 1,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume' as const,
      };
      await store.quota(request);
      const refused = await store.quota(request);
      expect(refused).toMatchObject({ allowed: false, renewsInSeconds: undefined });
    });

    it('starts a new window at the boundary', async () => {
      const { store, advance } = backend();
      // Windows of one second aligned on whole seconds.
      const request = {
        key: key('renew'),
        periodSeconds: 1,
        originMs: 0,
        callLimit: 1,
        kilobyteLimit: undefined,
        calls: 1,
        bytes: 0,
        mode: 'consume' as const,
      };
      const first = await store.quota(request);
      const second = await store.quota(request);
      // The first may land in the last instant of a window; then the second is in the next one.
      if (second.allowed) return;
      expect(first.allowed).toBe(true);
      await advance(second.renewsInSeconds! * 1000 + 20);
      expect((await store.quota(request)).allowed).toBe(true);
    });
  });

  describe(`${name}: concurrency`, () => {
    it('hands out at most `max` slots and reuses released ones', async () => {
      const { store } = backend();
      const k = key('conc');
      const a = await store.acquire(k, 2, 60);
      const b = await store.acquire(k, 2, 60);
      const c = await store.acquire(k, 2, 60);
      expect(a).toBeDefined();
      expect(b).toBeDefined();
      expect(c).toBeUndefined();
      await store.release(a!);
      expect(await store.acquire(k, 2, 60)).toBeDefined();
      expect(await store.acquire(k, 2, 60)).toBeUndefined();
    });

    it('a lease that is never released expires', async () => {
      const { store, advance } = backend();
      const k = key('lease');
      expect(await store.acquire(k, 1, 1)).toBeDefined();
      expect(await store.acquire(k, 1, 1)).toBeUndefined();
      await advance(1100);
      expect(await store.acquire(k, 1, 1)).toBeDefined();
    });
  });
}

limitSuite('in-process', () => {
  let now = Date.UTC(2025, 0, 1, 12, 0, 0, 250);
  const store = new MemoryLimitStore(() => now);
  return {
    store,
    advance: async (ms) => {
      now += ms;
    },
  };
});

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

limitSuite('redis', () => ({
  store: redisStore,
  // Redis keeps its own clock: letting a window pass means letting the time pass.
  advance: elapse,
}));

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
