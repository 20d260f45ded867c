import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';

/**
 * The vectors of llm-semantic-cache-lookup / -store: entries of (embedding, opaque value) kept per partition (the
 * partition names the API, the operation and the lookup's vary-by values, so one scan only ever compares prompts
 * that may share an answer), each with its own TTL. One interface, three backends like the limit counters:
 * in-process (this file), embedded (embedded-vectors.ts, LMDB in `state.dataDir`) and Redis (redis-vectors.ts).
 *
 * A lookup is a bounded scan: at most `VECTORS_PER_PARTITION` entries are kept per partition (the oldest go
 * first), so the cost of one lookup is bounded whatever the traffic. The installed Redis (7.0) has no vector
 * search (that came with Redis 8 / the RediSearch module), so Redis scans too; a partition is small enough that
 * the scan is one round trip and a few thousand multiplications.
 */
export interface VectorStore {
  /** The live entry of `partition` nearest to `vector` by cosine distance, when that distance is ≤ maxDistance. */
  nearest(partition: string, vector: Float32Array, maxDistance: number): Promise<VectorMatch | undefined>;
  /** Adds an entry; `ttlSeconds` ≤ 0 stores nothing. */
  add(partition: string, vector: Float32Array, value: Buffer, ttlSeconds: number): Promise<void>;
}

export interface VectorMatch {
  /** Cosine distance, 1 − cosine similarity: 0 for the same direction, 1 for orthogonal, 2 for opposite. */
  readonly distance: number;
  readonly value: Buffer;
}

/** Entries kept per partition; a new one past the bound replaces the oldest. */
export const VECTORS_PER_PARTITION = 256;

/**
 * 1 − cos(a, b). Vectors of different lengths (another embeddings model) or with no direction (all zeros) are
 * incomparable: Infinity, which no threshold admits.
 */
export function cosineDistance(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length || a.length === 0) return Number.POSITIVE_INFINITY;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return Number.POSITIVE_INFINITY;
  // Rounding can push the cosine of equal vectors a hair past 1; a distance is never negative.
  return Math.max(0, 1 - dot / Math.sqrt(normA * normB));
}

/** The nearest of `candidates` within maxDistance (the first of equals, i.e. the oldest). */
export function nearestOf(
  vector: Float32Array,
  candidates: Iterable<{ readonly vector: Float32Array; readonly value: Buffer }>,
  maxDistance: number,
): VectorMatch | undefined {
  let best: VectorMatch | undefined;
  for (const candidate of candidates) {
    const distance = cosineDistance(vector, candidate.vector);
    if (distance <= maxDistance && (best === undefined || distance < best.distance))
      best = { distance, value: candidate.value };
  }
  return best;
}

/** A partition's name may be long and hold any character: its hash keeps store keys short and ranges disjoint. */
export function partitionKey(partition: string): string {
  return createHash('sha256').update(partition).digest('base64url');
}

/** How a vector and a value travel as one byte string (LMDB values, Redis hash fields). */
export function encodeVectorEntry(vector: Float32Array, value: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32LE(vector.length, 0);
  const floats = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
  return Buffer.concat([head, floats, value]);
}

export function decodeVectorEntry(bytes: Buffer): { vector: Float32Array; value: Buffer } {
  const length = bytes.readUInt32LE(0);
  const end = 4 + length * 4;
  // A copy: the bytes of a Buffer need not be 4-aligned, which a Float32Array view requires.
  const vector = new Float32Array(length);
  for (let i = 0; i < length; i++) vector[i] = bytes.readFloatLE(4 + i * 4);
  return { vector, value: bytes.subarray(end) };
}

interface MemoryEntry {
  readonly vector: Float32Array;
  readonly value: Buffer;
  readonly expiresAt: number;
}

/** In-process vectors, bounded in bytes over all partitions (least recently used partitions go first). */
export class MemoryVectorStore implements VectorStore {
  readonly #partitions: LRUCache<string, readonly MemoryEntry[]>;

  constructor(
    options: { readonly maxBytes: number },
    private readonly now: () => number = Date.now,
  ) {
    this.#partitions = new LRUCache<string, readonly MemoryEntry[]>({
      maxSize: options.maxBytes,
      sizeCalculation: (entries, key) =>
        Math.max(
          1,
          key.length + entries.reduce((sum, e) => sum + e.vector.byteLength + e.value.length + 16, 0),
        ),
    });
  }

  async nearest(partition: string, vector: Float32Array, maxDistance: number) {
    const now = this.now();
    const live = (this.#partitions.get(partition) ?? []).filter((e) => e.expiresAt > now);
    return nearestOf(vector, live, maxDistance);
  }

  async add(partition: string, vector: Float32Array, value: Buffer, ttlSeconds: number) {
    if (ttlSeconds <= 0) return;
    const now = this.now();
    const kept = (this.#partitions.get(partition) ?? []).filter((e) => e.expiresAt > now);
    const entries = [...kept, { vector, value, expiresAt: now + ttlSeconds * 1000 }].slice(
      -VECTORS_PER_PARTITION,
    );
    // Set anew (not mutated) so the cache recomputes the partition's size.
    this.#partitions.set(partition, entries);
  }
}
