import { describe, expect, it } from 'vitest';
import {
  cosineDistance,
  decodeVectorEntry,
  encodeVectorEntry,
  MemoryVectorStore,
  nearestOf,
  VECTORS_PER_PARTITION,
} from '../../../src/state/vector-store.js';

const v = (...xs: number[]) => Float32Array.from(xs);

describe('cosineDistance', () => {
  it('is 0 for one direction, 1 for orthogonal, 2 for opposite, whatever the lengths of the vectors', () => {
    expect(cosineDistance(v(1, 2, 3), v(2, 4, 6))).toBeCloseTo(0, 6);
    expect(cosineDistance(v(1, 0), v(0, 5))).toBeCloseTo(1, 6);
    expect(cosineDistance(v(1, 1), v(-1, -1))).toBeCloseTo(2, 6);
    expect(cosineDistance(v(3, 4), v(4, 3))).toBeCloseTo(1 - 24 / 25, 6);
  });

  it('never admits vectors of different dimensions or without a direction', () => {
    expect(cosineDistance(v(1, 0), v(1, 0, 0))).toBe(Number.POSITIVE_INFINITY);
    expect(cosineDistance(v(0, 0), v(1, 0))).toBe(Number.POSITIVE_INFINITY);
    expect(cosineDistance(v(), v())).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('nearestOf', () => {
  const a = { vector: v(1, 0), value: Buffer.from('a') };
  const b = { vector: v(1, 1), value: Buffer.from('b') };

  it('takes the nearest entry within the threshold; the threshold itself is admitted', () => {
    expect(nearestOf(v(1, 0.1), [b, a], 0.5)?.value.toString()).toBe('a');
    const exact = cosineDistance(v(0, 1), v(1, 1));
    expect(nearestOf(v(0, 1), [a, b], exact)?.value.toString()).toBe('b');
  });

  it('finds nothing when every entry is farther than the threshold', () => {
    expect(nearestOf(v(0, 1), [a, b], 0.05)).toBeUndefined();
    expect(nearestOf(v(1, 0), [], 1)).toBeUndefined();
  });
});

describe('vector entries as bytes', () => {
  it('keep the vector and the value (floats at any alignment)', () => {
    const bytes = Buffer.concat([
      Buffer.from([7]),
      encodeVectorEntry(v(0.5, -1.25, 3), Buffer.from('value')),
    ]);
    const decoded = decodeVectorEntry(bytes.subarray(1));
    expect([...decoded.vector]).toEqual([0.5, -1.25, 3]);
    expect(decoded.value.toString()).toBe('value');
  });
});

describe('MemoryVectorStore', () => {
  it('keeps partitions apart and forgets an entry when its TTL ends', async () => {
    let now = 1_000;
    const store = new MemoryVectorStore({ maxBytes: 1 << 20 }, () => now);
    await store.add('p1', v(1, 0), Buffer.from('one'), 10);
    expect((await store.nearest('p1', v(1, 0), 0))?.value.toString()).toBe('one');
    expect(await store.nearest('p2', v(1, 0), 1)).toBeUndefined();
    now += 10_000;
    expect(await store.nearest('p1', v(1, 0), 1)).toBeUndefined();
  });

  it('keeps at most VECTORS_PER_PARTITION entries, dropping the oldest', async () => {
    const store = new MemoryVectorStore({ maxBytes: 1 << 24 });
    await store.add('p', v(1, 0), Buffer.from('first'), 60);
    for (let i = 0; i < VECTORS_PER_PARTITION; i++) await store.add('p', v(0, 1), Buffer.from(`n${i}`), 60);
    expect(await store.nearest('p', v(1, 0), 0.5)).toBeUndefined();
    expect((await store.nearest('p', v(0, 1), 0))?.value.toString()).toBe('n0');
  });

  it('stores nothing for a TTL of 0', async () => {
    const store = new MemoryVectorStore({ maxBytes: 1 << 20 });
    await store.add('p', v(1, 0), Buffer.from('x'), 0);
    expect(await store.nearest('p', v(1, 0), 1)).toBeUndefined();
  });
});
