import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmbeddedState, openEmbeddedState } from '../../../src/state/embedded.js';
import { EmbeddedVectorStore } from '../../../src/state/embedded-vectors.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import { RedisVectorStore, vectorKeys } from '../../../src/state/redis-vectors.js';
import {
  MemoryVectorStore,
  VECTORS_PER_PARTITION,
  type VectorStore,
} from '../../../src/state/vector-store.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';
import { until } from '../../processes/wait.js';

/**
 * The semantic cache's three vector stores give the same answers: the nearest entry of a partition within the
 * distance, partitions apart, at most VECTORS_PER_PARTITION entries (the oldest go), entries gone with their TTL.
 * The embedded store is shared by two LMDB environments on one directory, as by two engine processes.
 */
let directory: string;
let embedded: EmbeddedState;
let sibling: EmbeddedState;
let redis: RunningRedis;
let connection: RedisConnection;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-vectors-'));
  embedded = openEmbeddedState(directory);
  sibling = openEmbeddedState(directory);
  redis = await startRedis();
  connection = new RedisConnection({
    url: redis.url,
    keyPrefix: 'vt:',
    commandTimeoutMs: 500,
    connectTimeoutMs: 500,
  });
  await connection.ready(5000);
});

afterAll(async () => {
  await connection?.close();
  await redis?.close();
  await embedded?.close();
  await sibling?.close();
  if (directory) await rm(directory, { recursive: true, force: true });
});

let unique = 0;
const partition = () => `p-${process.pid}-${++unique}`;
const v = (...xs: number[]) => Float32Array.from(xs);

describe.each<[string, () => { store: VectorStore; other: VectorStore }]>([
  ['in-process', () => ({ store: new MemoryVectorStore({ maxBytes: 1 << 24 }), other: undefined as never })],
  ['embedded', () => ({ store: new EmbeddedVectorStore(embedded), other: new EmbeddedVectorStore(sibling) })],
  ['redis', () => ({ store: new RedisVectorStore(connection), other: new RedisVectorStore(connection) })],
])('%s vector store', (kind, make) => {
  it('finds the nearest entry within the distance, in its own partition only', async () => {
    const { store } = make();
    const p = partition();
    await store.add(p, v(1, 0, 0), Buffer.from('x'), 60);
    await store.add(p, v(0.8, 0.6, 0), Buffer.from('near'), 60);
    const found = await store.nearest(p, v(0.79, 0.61, 0), 0.05);
    expect(found?.value.toString()).toBe('near');
    expect(found?.distance).toBeLessThan(0.001);
    expect(await store.nearest(p, v(0, 0, 1), 0.5)).toBeUndefined();
    expect(await store.nearest(partition(), v(1, 0, 0), 1)).toBeUndefined();
  });

  // Only stores other processes can share have this case: it is not registered (not skipped) for the in-process one.
  if (kind !== 'in-process')
    it('is shared with another process', async () => {
      const { store, other } = make();
      const p = partition();
      await store.add(p, v(0, 1), Buffer.from('shared'), 60);
      expect((await other.nearest(p, v(0, 1), 0))?.value.toString()).toBe('shared');
    });

  it('keeps at most VECTORS_PER_PARTITION entries, dropping the oldest', async () => {
    const { store } = make();
    const p = partition();
    await store.add(p, v(1, 0), Buffer.from('first'), 60);
    for (let i = 0; i < VECTORS_PER_PARTITION; i++) await store.add(p, v(0, 1), Buffer.from(`n${i}`), 60);
    expect(await store.nearest(p, v(1, 0), 0.5)).toBeUndefined();
    expect(await store.nearest(p, v(0, 1), 0)).toBeDefined();
  });

  it('forgets an entry when its TTL ends', async () => {
    const { store } = make();
    const p = partition();
    await store.add(p, v(1, 1), Buffer.from('brief'), 0.2);
    expect(await store.nearest(p, v(1, 1), 0)).toBeDefined();
    await until(async () => (await store.nearest(p, v(1, 1), 0)) === undefined, 'the entry to expire', 5000);
  });
});

describe('redis vector store keys', () => {
  it('puts a partition in one hash slot and lets its keys expire', async () => {
    const store = new RedisVectorStore(connection);
    await store.add('slot-check', v(1, 0), Buffer.from('x'), 30);
    const keys = vectorKeys('slot-check');
    const slot = /\{[\w-]+\}/.exec(keys[0])?.[0];
    for (const key of keys) {
      expect(key).toContain(slot);
      const ttl = Number(redis.cli('PTTL', `vt:${key}`).trim());
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(30_000);
    }
  });
});
