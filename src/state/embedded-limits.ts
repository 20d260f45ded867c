import { randomUUID } from 'node:crypto';
import type { Database } from 'lmdb';
import type { EmbeddedState } from './embedded.js';
import {
  countQuota,
  countSlidingWindow,
  type QuotaCounter,
  type Slot,
  takeSlot,
  type WindowBucket,
} from './limit-rules.js';
import {
  type ConcurrencyLease,
  type LimitStore,
  type QuotaRequest,
  type QuotaResult,
  type SlidingWindowRequest,
  type SlidingWindowResult,
  StateUnavailableError,
} from './limits.js';

/*
 * Records are flat arrays of numbers and strings, the cheapest msgpack shape (no shared structures to agree on
 * between processes), expiry first so the sweep reads one number:
 *   window  [expiresAt, index, count, last, index, count, last, …]
 *   quota   [expiresAt, index, periodMs, originMs, calls, bytes]     (expiresAt Infinity: never renews)
 *   slots   [expiresAt, token, leaseEnd, token, leaseEnd, …]          (expiresAt: the latest leaseEnd)
 */
type WindowRecord = number[];
type QuotaRecord = [number, number, number, number, number, number];
type SlotsRecord = (number | string)[];

function windowBuckets(record: WindowRecord | undefined): WindowBucket[] {
  const buckets: WindowBucket[] = [];
  if (record === undefined) return buckets;
  for (let i = 1; i + 2 < record.length; i += 3)
    buckets.push({ index: record[i]!, count: record[i + 1]!, last: record[i + 2]! });
  return buckets;
}

function windowRecord(buckets: readonly WindowBucket[], expiresAt: number): WindowRecord {
  const record = [expiresAt];
  for (const bucket of buckets) record.push(bucket.index, bucket.count, bucket.last);
  return record;
}

function quotaCounter(record: QuotaRecord | undefined): QuotaCounter | undefined {
  if (record === undefined) return undefined;
  const [expiresAt, index, periodMs, originMs, calls, bytes] = record;
  return { expiresAt, index, periodMs, originMs, calls, bytes };
}

function slots(record: SlotsRecord | undefined): Slot[] {
  const held: Slot[] = [];
  if (record === undefined) return held;
  for (let i = 1; i + 1 < record.length; i += 2)
    held.push({ token: String(record[i]), expiresAt: Number(record[i + 1]) });
  return held;
}

function slotsRecord(held: readonly Slot[]): SlotsRecord {
  const record: SlotsRecord = [Math.max(0, ...held.map((slot) => slot.expiresAt))];
  for (const slot of held) record.push(slot.token, slot.expiresAt);
  return record;
}

/** Operations between two sweeps of expired records, and records one sweep looks at (it resumes where it left). */
const SWEEP_EVERY = 1024;
const SWEEP_BATCH = 1000;

/**
 * LimitStore on the embedded LMDB store of `state.dataDir`: the counters outlive the process, and every engine
 * process of the machine that opens the same directory shares them, each read-decide-write one LMDB write
 * transaction (LMDB's writer lock serialises processes). Time is the machine's clock, which all of them share.
 *
 * - Quotas (a month's count must survive anything) are in the synced environment: the answer waits for the
 *   commit to reach the disk; concurrent requests share one commit (lmdb's batched asynchronous transactions).
 * - Sliding windows and concurrency leases live seconds to minutes and are on every limited request: they are
 *   in the unsynced environment, one synchronous transaction of microseconds; they survive a process restart or
 *   kill, not a machine crash.
 *
 * Expired records are swept every SWEEP_EVERY operations, a batch at a time. LMDB failures (a full disk, a full
 * map) throw StateUnavailableError, so the configured failure mode of the policy applies as for Redis.
 */
export class EmbeddedLimitStore implements LimitStore {
  readonly #quotas: Database<QuotaRecord, string>;
  readonly #windows: Database<WindowRecord, string>;
  readonly #slots: Database<SlotsRecord, string>;
  #operations = 0;
  readonly #sweepFrom = new Map<Database<unknown[], string>, string | undefined>();

  constructor(
    state: EmbeddedState,
    private readonly now: () => number = Date.now,
  ) {
    this.#quotas = state.database<QuotaRecord>('limit-quotas');
    this.#windows = state.unsyncedDatabase<WindowRecord>('limit-windows');
    this.#slots = state.unsyncedDatabase<SlotsRecord>('limit-slots');
  }

  async slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult> {
    this.#maybeSweep();
    return this.#guard('rate-limit', () =>
      this.#windows.transactionSync(() => {
        const stored = this.#windows.get(request.key);
        const outcome = countSlidingWindow(windowBuckets(stored), request, this.now(), stored?.[0]);
        if (outcome.changed) {
          if (outcome.buckets.length === 0) this.#windows.removeSync(request.key);
          else this.#windows.putSync(request.key, windowRecord(outcome.buckets, outcome.expiresAt));
        }
        return outcome.result;
      }),
    );
  }

  async quota(request: QuotaRequest): Promise<QuotaResult> {
    this.#maybeSweep();
    return this.#guard('quota', () =>
      this.#quotas.transaction(() => {
        const outcome = countQuota(quotaCounter(this.#quotas.get(request.key)), request, this.now());
        if (outcome.changed) {
          const c = outcome.counter;
          this.#quotas.putSync(request.key, [c.expiresAt, c.index, c.periodMs, c.originMs, c.calls, c.bytes]);
        }
        return outcome.result;
      }),
    );
  }

  async acquire(key: string, max: number, leaseSeconds: number): Promise<ConcurrencyLease | undefined> {
    this.#maybeSweep();
    const token = randomUUID();
    const taken = await this.#guard('limit-concurrency', () =>
      this.#slots.transactionSync(() => {
        const held = takeSlot(slots(this.#slots.get(key)), max, leaseSeconds, this.now(), token);
        if (held !== undefined) this.#slots.putSync(key, slotsRecord(held));
        return held !== undefined;
      }),
    );
    return taken ? { key, token } : undefined;
  }

  async release(lease: ConcurrencyLease): Promise<void> {
    await this.#guard('limit-concurrency release', () =>
      this.#slots.transactionSync(() => {
        const stored = this.#slots.get(lease.key);
        if (stored === undefined) return;
        const held = slots(stored).filter((slot) => slot.token !== lease.token);
        if (held.length === 0) this.#slots.removeSync(lease.key);
        else this.#slots.putSync(lease.key, slotsRecord(held));
      }),
    );
  }

  /** Removes up to SWEEP_BATCH expired records of each database; resolves once they are committed. */
  async sweep(): Promise<void> {
    const now = this.now();
    await Promise.all(
      [this.#windows, this.#slots, this.#quotas].map((db) =>
        this.#sweepBatch(db as Database<unknown[], string>, now),
      ),
    );
  }

  #maybeSweep(): void {
    if (++this.#operations % SWEEP_EVERY !== 0) return;
    // Best effort: what is not swept now is swept by a later round, and counting never depends on it.
    this.sweep().catch(() => undefined);
  }

  async #sweepBatch(db: Database<unknown[], string>, now: number): Promise<void> {
    const from = this.#sweepFrom.get(db);
    const expired: string[] = [];
    let last: string | undefined;
    let seen = 0;
    for (const { key, value } of db.getRange(
      from === undefined ? { limit: SWEEP_BATCH } : { start: from, limit: SWEEP_BATCH },
    )) {
      seen++;
      last = key;
      if (Number(value[0]) <= now) expired.push(key);
    }
    // A full batch resumes after its last key; a short one reached the end and starts over next time.
    this.#sweepFrom.set(db, seen === SWEEP_BATCH ? `${last}\u0000` : undefined);
    if (expired.length === 0) return;
    // Another process may have renewed a record since it was read: look again inside the write transaction.
    await db.transaction(() => {
      for (const key of expired) {
        const value = db.get(key);
        if (value !== undefined && Number(value[0]) <= now) db.removeSync(key);
      }
    });
  }

  async #guard<T>(operation: string, run: () => T | Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw new StateUnavailableError(
        `${operation}: the embedded store failed (${error instanceof Error ? error.message : String(error)})`,
        error,
      );
    }
  }
}
