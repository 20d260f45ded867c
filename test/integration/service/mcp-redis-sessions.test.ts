import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SessionStoreUnavailableError } from '../../../src/mcp/index.js';
import { RedisSessionStore } from '../../../src/service/mcp-redis-sessions.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import {
  type RunningRedis,
  type RunningRedisCluster,
  startRedis,
  startRedisCluster,
} from '../../processes/redis.js';
import { until } from '../../processes/wait.js';

/**
 * The MCP session store of `state.redis`, against a real Redis and a real three-node Redis Cluster: two stores on
 * two connections stand for two service processes.
 */

let redis: RunningRedis;
let cluster: RunningRedisCluster;
const connections: RedisConnection[] = [];
beforeAll(async () => {
  [redis, cluster] = await Promise.all([startRedis(), startRedisCluster()]);
}, 60_000);
afterAll(async () => {
  await Promise.all(connections.map((connection) => connection.close()));
  await redis?.close();
  await cluster?.close();
});

function connect(target: { url: string } | { cluster: readonly string[] }): RedisConnection {
  const connection = new RedisConnection({
    ...target,
    keyPrefix: 'pc:',
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  connections.push(connection);
  return connection;
}

const alice = { sub: 'alice', clientId: 'c1' };
const bob = { sub: 'bob', clientId: 'c1' };
const method = 'notifications/tools/list_changed';

describe.each([
  ['one Redis', () => ({ url: redis.url })],
  ['a Redis Cluster', () => ({ cluster: cluster.urls })],
])('MCP sessions in %s', (_name, target) => {
  let a: RedisSessionStore;
  let b: RedisSessionStore;
  beforeAll(() => {
    a = new RedisSessionStore(connect(target()), { maxSessionsPerSubject: 2 });
    b = new RedisSessionStore(connect(target()), { maxSessionsPerSubject: 2 });
  });

  it('a session created by one process is found, initialized and deleted by another', async () => {
    const session = await a.create('2025-11-25', alice);
    expect(session.id).toMatch(/^[A-Za-z0-9_-]{40}$/);
    expect(await b.find(session.id)).toEqual({ ...session, initialized: false });
    await b.markInitialized(session.id);
    expect((await a.find(session.id))?.initialized).toBe(true);
    await a.delete(session.id);
    expect(await b.find(session.id)).toBeUndefined();
    // Marking a deleted session leaves nothing behind.
    await b.markInitialized(session.id);
    expect(await a.find(session.id)).toBeUndefined();
  });

  it("holds a session's attachments for every process: the first claim wins, and they go with the session", async () => {
    const session = await a.create('2025-11-25', alice);
    expect(await b.attachments.get(session.id, 'upstream:notes')).toBeUndefined();
    expect(await a.attachments.claim(session.id, 'upstream:notes', 'first')).toBe('first');
    expect(await b.attachments.claim(session.id, 'upstream:notes', 'second')).toBe('first');
    expect(await b.attachments.get(session.id, 'upstream:notes')).toBe('first');
    expect(await b.attachments.claim(session.id, 'upstream:weather', 'w')).toBe('w');
    expect(await a.attachments.all(session.id)).toEqual(
      new Map([
        ['upstream:notes', 'first'],
        ['upstream:weather', 'w'],
      ]),
    );
    // The session record is unchanged by them.
    expect(await a.find(session.id)).toEqual({ ...session, initialized: false });
    await b.delete(session.id);
    expect(await a.attachments.all(session.id)).toEqual(new Map());
    // A session that is gone (or never was) takes none.
    expect(await a.attachments.claim(session.id, 'upstream:notes', 'late')).toBeUndefined();
    expect(await a.attachments.get(session.id, 'upstream:notes')).toBeUndefined();
    expect(await a.attachments.claim('not-an-id', 'upstream:notes', 'x')).toBeUndefined();
  });

  it('knows no id it did not make', async () => {
    for (const id of ['', 'x', 'a'.repeat(40), `${'a'.repeat(39)}!`, '../../etc'])
      expect(await a.find(id)).toBeUndefined();
  });

  it("caps one owner's sessions over both processes; the oldest ends, other owners keep theirs", async () => {
    const mine = [await a.create('2025-06-18', bob), await b.create('2025-06-18', bob)];
    const other = await a.create('2025-06-18', { sub: 'carol', clientId: 'c1' });
    mine.push(await b.create('2025-06-18', bob));
    const alive = await Promise.all([...mine, other].map(async (s) => (await a.find(s.id)) !== undefined));
    expect(alive).toEqual([false, true, true, true]);
  });

  it('ends the oldest even among sessions made within the same millisecond', async () => {
    const dave = { sub: 'dave', clientId: 'c1' };
    // Made back to back from both processes, all within one millisecond of this process's clock (held still: on a
    // quiet machine they would share one only now and then), and the order must still hold.
    const clock = vi.spyOn(Date, 'now').mockReturnValue(Date.now());
    const made = [];
    try {
      for (let i = 0; i < 12; i++) made.push(await (i % 2 === 0 ? a : b).create('2025-06-18', dave));
    } finally {
      clock.mockRestore();
    }
    const alive = await Promise.all(made.map(async (s) => (await b.find(s.id)) !== undefined));
    expect(alive).toEqual([...Array<boolean>(10).fill(false), true, true]);
  });

  it('shares request slots between processes; a released slot is free for either', async () => {
    const { id } = await a.create('2025-11-25', alice);
    const one = await a.acquire(id, 2);
    const two = await b.acquire(id, 2);
    expect(one && two).toBeDefined();
    expect(await a.acquire(id, 2)).toBeUndefined();
    expect(await b.acquire(id, 2)).toBeUndefined();
    one!();
    one!();
    let three: (() => void) | undefined;
    await until(async () => {
      three = await b.acquire(id, 2);
      return three !== undefined;
    }, 'the released slot');
    expect(await a.acquire(id, 2)).toBeUndefined();
    two!();
    three!();
  });

  it('logs a notification once per fingerprint, readable by every process after a resume point', async () => {
    const { newest: start } = await b.notifications.read(undefined, 10);
    const first = await a.notifications.append(method, `fp-${_name}-1`);
    expect(await b.notifications.append(method, `fp-${_name}-1`)).toBe(first);
    const second = await b.notifications.append(method, `fp-${_name}-2`);
    expect(await a.notifications.read(start, 10)).toEqual({
      entries: [
        { id: first, method },
        { id: second, method },
      ],
      newest: second,
    });
    expect(await b.notifications.read(first, 10)).toEqual({
      entries: [{ id: second, method }],
      newest: second,
    });
  });

  it("logs one session's notifications and the service's messages beside the broadcast ones, never deduplicated", async () => {
    const { newest: start } = await b.notifications.read(undefined, 10);
    const to = `session:${_name}`;
    const params = { level: 'info', data: 'outside a call' };
    const log = await a.notifications.append('notifications/message', 'k', { to, params });
    const again = await b.notifications.append('notifications/message', 'k', { to, params });
    const cancel = await b.notifications.append('notifications/cancelled', 'c', {
      to,
      params: { requestId: 7 },
      service: true,
    });
    expect(again).not.toBe(log);
    expect((await a.notifications.read(start, 10)).entries).toEqual([
      { id: log, method: 'notifications/message', to, params },
      { id: again, method: 'notifications/message', to, params },
      { id: cancel, method: 'notifications/cancelled', to, params: { requestId: 7 }, service: true },
    ]);
  });

  it('leases an upstream GET stream to one process: renewed by it, taken by another once let go, gone when dropped', async () => {
    const key = `session-${_name}\nnotes`;
    const data = JSON.stringify({ subject: alice });
    expect(await a.streamLeases.take(key, 'A', 60_000, data)).toBe(true);
    expect(await b.streamLeases.take(key, 'B', 60_000, data)).toBe(false);
    expect(await b.streamLeases.renew([key], 'B', 60_000)).toEqual([]);
    expect(await a.streamLeases.renew([key], 'A', 60_000)).toEqual([key]);
    expect((await b.streamLeases.lapsed(100)).map((lease) => lease.key)).not.toContain(key);
    await b.streamLeases.release([key], 'B');
    expect((await b.streamLeases.lapsed(100)).map((lease) => lease.key)).not.toContain(key);
    await a.streamLeases.release([key], 'A');
    expect(await b.streamLeases.lapsed(100)).toContainEqual({ key, data });
    expect(await b.streamLeases.take(key, 'B', 60_000, data)).toBe(true);
    expect(await a.streamLeases.renew([key], 'A', 60_000)).toEqual([]);
    await a.streamLeases.drop([key]);
    expect(await b.streamLeases.renew([key], 'B', 60_000)).toEqual([]);
  });

  it('a lease not renewed lapses by itself (its process died)', async () => {
    const key = `session-${_name}\ndead`;
    expect(await a.streamLeases.take(key, 'A', 200, '{}')).toBe(true);
    await until(
      async () => (await b.streamLeases.lapsed(100)).some((lease) => lease.key === key),
      'the lease to lapse',
    );
    expect(await b.streamLeases.take(key, 'B', 60_000, '{}')).toBe(true);
    await b.streamLeases.drop([key]);
  });
});

describe('MCP sessions when Redis is gone', () => {
  it('fails with SessionStoreUnavailableError (the endpoint answers 503), and works again when it is back', async () => {
    const store = new RedisSessionStore(connect({ url: redis.url }));
    const session = await store.create('2025-11-25', alice);
    await redis.stop();
    await expect(store.find(session.id)).rejects.toBeInstanceOf(SessionStoreUnavailableError);
    await expect(store.notifications.read(undefined, 1)).rejects.toBeInstanceOf(SessionStoreUnavailableError);
    await redis.start();
    await until(
      () =>
        store.create('2025-11-25', alice).then(
          () => true,
          () => false,
        ),
      'the store to work again',
      5000,
    );
  });
});
