import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StateUnavailableError } from '../../../src/state/limits.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import {
  type RunningRedis,
  type RunningRedisCluster,
  startRedis,
  startRedisCluster,
} from '../../processes/redis.js';
import { until } from '../../processes/wait.js';

const MODULE = fileURLToPath(new URL('../../../src/state/redis-connection.ts', import.meta.url));

/** Runs a script in a fresh Node process; resolves with its exit code, or 'still running' after `ms`. */
function exitsWithin(script: string, ms: number): Promise<number | 'still running'> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    stdio: 'ignore',
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('still running');
    }, ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code ?? -1);
    });
  });
}

describe('RedisConnection lifecycle', () => {
  let redis: RunningRedis;

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await redis?.close();
  });

  it('never keeps a process alive on its own, connected or retrying an unreachable Redis', async () => {
    const script = (url: string) => `
      import { RedisConnection } from ${JSON.stringify(MODULE)};
      const c = new RedisConnection({ url: ${JSON.stringify(url)}, keyPrefix: 'x:', commandTimeoutMs: 100, connectTimeoutMs: 200 });
      setTimeout(() => {}, 700);`;
    expect(await exitsWithin(script('redis://127.0.0.1:1'), 8000)).toBe(0);
    expect(await exitsWithin(script(redis.url), 8000)).toBe(0);
  });

  it('reconnects by itself and reports down once, ready once', async () => {
    const events: string[] = [];
    const connection = new RedisConnection({
      url: redis.url,
      keyPrefix: 'x:',
      commandTimeoutMs: 200,
      connectTimeoutMs: 300,
      onStatus: (status) => events.push(status),
    });
    await connection.ready(5000);
    await redis.stop();
    await until(() => !connection.available, 'the connection to notice Redis is gone', 10_000);
    await expect(connection.run('ping', (client) => client.ping())).rejects.toThrow(/redis unavailable/);
    await redis.start();
    await connection.ready(5000);
    expect(await connection.run('ping', (client) => client.ping())).toBe('PONG');
    expect(events).toEqual(['down', 'ready']);
    await connection.close();
  });
});

describe('RedisConnection to a Redis Cluster', () => {
  let cluster: RunningRedisCluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
  });

  afterAll(async () => {
    await cluster?.close();
  });

  it('never keeps a process alive on its own, connected to every node or retrying an unreachable cluster', async () => {
    const script = (nodes: readonly string[]) => `
      import { RedisConnection } from ${JSON.stringify(MODULE)};
      const c = new RedisConnection({ cluster: ${JSON.stringify(nodes)}, keyPrefix: 'x:', commandTimeoutMs: 500, connectTimeoutMs: 500 });
      // Keys on every node, so a connection to each one is open when the timer ends.
      await c.ready(5000);
      await Promise.all(Array.from({ length: 30 }, (_, i) => c.run('set', (r) => r.set('k' + i, '1'))));
      setTimeout(() => {}, 300);`;
    expect(await exitsWithin(script(cluster.urls), 8000)).toBe(0);
    const unreachable = `
      import { RedisConnection } from ${JSON.stringify(MODULE)};
      new RedisConnection({ cluster: ['redis://127.0.0.1:1'], keyPrefix: 'x:', commandTimeoutMs: 100, connectTimeoutMs: 200 });
      setTimeout(() => {}, 700);`;
    expect(await exitsWithin(unreachable, 8000)).toBe(0);
  });

  it('serves again by itself once every node is back; meanwhile commands fail within the command timeout', async () => {
    const connection = new RedisConnection({
      cluster: cluster.urls,
      keyPrefix: 'x:',
      commandTimeoutMs: 300,
      connectTimeoutMs: 300,
    });
    const set = () => connection.run('set', (client) => client.set(`k-${process.pid}`, '1'));
    await connection.ready(10_000);
    await set();
    for (const index of cluster.ports.keys()) await cluster.stopNode(index);
    try {
      const started = Date.now();
      await expect(set()).rejects.toBeInstanceOf(StateUnavailableError);
      expect(Date.now() - started).toBeLessThan(800);
    } finally {
      await Promise.all([...cluster.ports.keys()].map((index) => cluster.startNode(index)));
    }
    await until(
      () =>
        set().then(
          () => true,
          () => false,
        ),
      'the cluster to serve again through the same connection',
      { timeoutMs: 10_000, everyMs: 100 },
    );
    await connection.close();
  });
});
