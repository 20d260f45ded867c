import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisEventStream } from '../../../src/state/event-stream.js';
import { StateUnavailableError } from '../../../src/state/limits.js';
import { stateConfigSchema } from '../../../src/state/options.js';
import { RedisByteCache } from '../../../src/state/redis-cache.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import { RedisLimitStore } from '../../../src/state/redis-limits.js';
import { type RunningRedisCluster, startRedisCluster } from '../../processes/redis.js';
import { elapse, until } from '../../processes/wait.js';
import { limitStoreSuite } from '../../suites/limit-store.js';

/**
 * The Redis backends of the engine's state against a real three-node Redis Cluster (three primaries, no
 * replicas): the limit store's shared specification, the byte cache and the event stream, with keys spread over
 * every node so each script and pipeline meets the one-slot (one-node) rule for real.
 */

let cluster: RunningRedisCluster;
const connections: RedisConnection[] = [];

function connect(keyPrefix = 'ct:'): RedisConnection {
  const connection = new RedisConnection({
    cluster: cluster.urls,
    keyPrefix,
    commandTimeoutMs: 1000,
    connectTimeoutMs: 1000,
  });
  connections.push(connection);
  return connection;
}

let store: RedisLimitStore;

beforeAll(async () => {
  cluster = await startRedisCluster();
  const connection = connect();
  await connection.ready(10_000);
  store = new RedisLimitStore(connection);
});

afterAll(async () => {
  await Promise.all(connections.map((connection) => connection.close()));
  await cluster?.close();
});

limitStoreSuite(
  'redis cluster',
  () => ({
    store,
    // Redis keeps its own clock: letting a window pass means letting the time pass.
    advance: elapse,
    sibling: async () => {
      const sibling = connect();
      await sibling.ready(10_000);
      return new RedisLimitStore(sibling);
    },
  }),
  true,
);

/** Keys per node of the cluster (DBSIZE of each primary). */
const keysPerNode = () =>
  cluster.ports.map((port) => Number(cluster.cli('-p', String(port), 'DBSIZE').trim().split('\n').pop()));

describe('redis cluster: cache, streams, spread and failures', () => {
  it('state.redis accepts a cluster, and exactly one of url and cluster', () => {
    const parsed = stateConfigSchema.parse({ redis: { cluster: cluster.urls } });
    expect(parsed.redis).toMatchObject({ cluster: cluster.urls, keyPrefix: 'portcullis:' });
    const both = stateConfigSchema.safeParse({ redis: { url: cluster.urls[0], cluster: cluster.urls } });
    expect(both.success).toBe(false);
    expect(both.error?.issues[0]?.message).toMatch(/exactly one of url .* or cluster/);
    expect(stateConfigSchema.safeParse({ redis: {} }).success).toBe(false);
    expect(stateConfigSchema.safeParse({ redis: { cluster: [] } }).success).toBe(false);
  });

  it('a cached entry written through one connection is read through another, on every node', async () => {
    const writer = new RedisByteCache(connect(), 'resp', 1024);
    const reader = new RedisByteCache(connect(), 'resp', 1024);
    const keys = Array.from({ length: 30 }, (_, i) => `entry-${i}`);
    await Promise.all(keys.map((key) => writer.set(key, Buffer.from(`value of ${key}`), 60)));
    const read = await Promise.all(keys.map((key) => reader.get(key)));
    expect(read.map((value) => value?.toString())).toEqual(keys.map((key) => `value of ${key}`));
    await reader.delete('entry-0');
    expect(await writer.get('entry-0')).toBeUndefined();
    // 30 keys over 16384 slots: every primary holds some, so reads and writes crossed nodes.
    expect(keysPerNode().every((count) => count > 0)).toBe(true);
  });

  it('log-to-eventhub writes one batch to streams that live on different nodes', async () => {
    const streams = ['audit-a', 'audit-b', 'audit-c', 'audit-d', 'audit-e', 'audit-f'];
    expect(new Set(streams.map((stream) => cluster.nodeOf(`ev:${stream}`))).size).toBeGreaterThan(1);
    const errors: string[] = [];
    const events = new RedisEventStream(connect('ev:'), {
      targets: new Map(streams.map((stream) => [stream, { stream, maxLength: 100 }])),
      bufferSize: 100,
      onError: (message) => errors.push(message),
    });
    for (const stream of streams) events.send({ loggerId: stream, message: `hello ${stream}` });
    await events.flush();
    expect(errors).toEqual([]);
    expect(events.sent).toBe(streams.length);
    for (const stream of streams)
      expect(cluster.cli('XRANGE', `ev:${stream}`, '-', '+')).toContain(`hello ${stream}`);
    await events.close();
  });

  it('a rate limit is exact across two connections while its calls arrive concurrently', async () => {
    const other = connect();
    await other.ready(10_000);
    const second = new RedisLimitStore(other);
    const key = `shared-${process.pid}`;
    const calls = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 === 0 ? store : second).slidingWindow({
          key,
          limit: 25,
          periodSeconds: 60,
          amount: 1,
          mode: 'consume',
        }),
      ),
    );
    expect(calls.filter((result) => result.allowed)).toHaveLength(25);
  });

  it('a node down fails the commands for its slots within the command timeout, the others serve on', async () => {
    const connection = new RedisConnection({
      cluster: cluster.urls,
      keyPrefix: 'down:',
      commandTimeoutMs: 300,
      connectTimeoutMs: 300,
    });
    connections.push(connection);
    await connection.ready(10_000);
    const limits = new RedisLimitStore(connection);
    const keys = Array.from({ length: 30 }, (_, i) => `down-${process.pid}-${i}`);
    const keyOn = (node: number) => keys.find((key) => cluster.nodeOf(`down:rl:${key}`) === node)!;
    const [lost, kept] = [keyOn(1), keyOn(0)];
    const call = (key: string) =>
      limits.slidingWindow({ key, limit: 100, periodSeconds: 60, amount: 1, mode: 'consume' });
    await call(lost);
    await call(kept);

    await cluster.stopNode(1);
    try {
      const started = Date.now();
      const failure = await call(lost).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StateUnavailableError);
      // ioredis alone would follow MOVED to the dead node up to 16 times, 100 ms apart.
      expect(Date.now() - started).toBeLessThan(800);
      expect(await call(kept)).toMatchObject({ allowed: true, used: 2 });
    } finally {
      await cluster.startNode(1);
    }
    // Back (empty), the node serves its slots again through the same connection.
    await until(
      () =>
        call(lost).then(
          (result) => result.allowed,
          () => false,
        ),
      'the restarted node to serve its slots again',
      { timeoutMs: 10_000, everyMs: 100 },
    );
  });

  it('a password in the seed URL reaches the nodes discovered from it', async () => {
    const guarded = await startRedisCluster({ password: 'cluster secret' });
    try {
      const connection = new RedisConnection({
        cluster: [guarded.urls[0]!],
        keyPrefix: 'pw:',
        commandTimeoutMs: 1000,
        connectTimeoutMs: 1000,
      });
      connections.push(connection);
      expect(connection.target).not.toContain('secret');
      await connection.ready(10_000);
      const cache = new RedisByteCache(connection, 'val', 1024);
      const keys = Array.from({ length: 12 }, (_, i) => `pw-${i}`);
      // Keys on every node: the two found through CLUSTER SLOTS need the password too.
      expect(new Set(keys.map((key) => guarded.nodeOf(`pw:val:${key}`))).size).toBe(3);
      await Promise.all(keys.map((key) => cache.set(key, Buffer.from(key), 60)));
      expect((await Promise.all(keys.map((key) => cache.get(key)))).map(String)).toEqual(keys);
      await connection.close();
    } finally {
      await guarded.close();
    }
  });

  it('a cluster that cannot be reached fails its commands within the command timeout', async () => {
    const nowhere = new RedisConnection({
      cluster: ['redis://127.0.0.1:1'],
      keyPrefix: 'ct:',
      commandTimeoutMs: 150,
      connectTimeoutMs: 200,
    });
    connections.push(nowhere);
    const started = Date.now();
    const failure = await new RedisLimitStore(nowhere).acquire('x', 1, 1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StateUnavailableError);
    expect(Date.now() - started).toBeLessThan(1000);
    await until(() => !nowhere.available, 'the unreachable cluster to be noticed', {
      timeoutMs: 3000,
      everyMs: 10,
    });
  });
});
