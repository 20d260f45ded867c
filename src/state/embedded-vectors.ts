import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import type { EmbeddedState } from './embedded.js';
import { StateUnavailableError } from './limits.js';
import {
  decodeVectorEntry,
  encodeVectorEntry,
  nearestOf,
  partitionKey,
  VECTORS_PER_PARTITION,
  type VectorMatch,
  type VectorStore,
} from './vector-store.js';

let sequence = 0;

/** [expiresAt, entry (encodeVectorEntry)]: expiry first, so a scan skips dead entries without decoding them. */
type VectorRecord = [number, Buffer];

/**
 * Vectors in the embedded LMDB store of `state.dataDir`, shared by the engine processes of one machine and kept
 * across restarts. A cache needs no durability, so they live in the unsynced environment. Keys are
 * `<partition hash>:<time><sequence><random>`, so one partition is one contiguous range, oldest first: a lookup scans the
 * range, an insertion drops the expired and (past VECTORS_PER_PARTITION) the oldest entries of its partition in
 * the same write transaction.
 */
export class EmbeddedVectorStore implements VectorStore {
  readonly #vectors: Database<VectorRecord, string>;

  constructor(
    state: EmbeddedState,
    private readonly now: () => number = Date.now,
  ) {
    this.#vectors = state.unsyncedDatabase<VectorRecord>('semantic-cache');
  }

  async nearest(
    partition: string,
    vector: Float32Array,
    maxDistance: number,
  ): Promise<VectorMatch | undefined> {
    const now = this.now();
    return this.#guard('semantic cache lookup', () => {
      const live: { vector: Float32Array; value: Buffer }[] = [];
      for (const { value } of this.#vectors.getRange({
        ...range(partition),
        limit: VECTORS_PER_PARTITION * 2,
      })) {
        if (value[0] > now) live.push(decodeVectorEntry(Buffer.from(value[1])));
      }
      return nearestOf(vector, live, maxDistance);
    });
  }

  async add(partition: string, vector: Float32Array, value: Buffer, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    const now = this.now();
    const prefix = partitionKey(partition);
    // Time, then this process's sequence: entries of one millisecond keep their order (the oldest goes first).
    sequence = (sequence + 1) % 36 ** 4;
    const key = `${prefix}:${now.toString(36).padStart(10, '0')}${sequence.toString(36).padStart(4, '0')}${randomBytes(4).toString('hex')}`;
    await this.#guard('semantic cache store', () =>
      this.#vectors.transactionSync(() => {
        const kept: string[] = [];
        for (const { key: existing, value: record } of this.#vectors.getRange(range(partition))) {
          if (record[0] <= now) this.#vectors.removeSync(existing);
          else kept.push(existing);
        }
        for (const oldest of kept.slice(0, Math.max(0, kept.length - VECTORS_PER_PARTITION + 1)))
          this.#vectors.removeSync(oldest);
        this.#vectors.putSync(key, [now + ttlSeconds * 1000, encodeVectorEntry(vector, value)]);
      }),
    );
  }

  async #guard<T>(operation: string, run: () => T): Promise<T> {
    try {
      return run();
    } catch (error) {
      throw new StateUnavailableError(
        `${operation}: the embedded store failed (${error instanceof Error ? error.message : String(error)})`,
        error,
      );
    }
  }
}

function range(partition: string): { start: string; end: string } {
  const prefix = partitionKey(partition);
  // ';' sorts right after ':', so the range holds exactly the keys `<prefix>:…`.
  return { start: `${prefix}:`, end: `${prefix};` };
}
