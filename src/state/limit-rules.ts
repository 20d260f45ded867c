import {
  bucketMs,
  type QuotaRequest,
  type QuotaResult,
  quotaWindow,
  type SlidingWindowRequest,
  type SlidingWindowResult,
} from './limits.js';

/*
 * The counting rules of the in-process and embedded stores, as pure functions over plain records: each store
 * reads a record, applies a rule and writes back what it returns (the embedded store inside one LMDB transaction).
 * redis-limits.ts runs the same rules as Lua scripts; change them together.
 */

/** Calls of one bucket of a sliding window: how many, and when the latest of them was made. */
export interface WindowBucket {
  readonly index: number;
  readonly count: number;
  readonly last: number;
}

export interface WindowOutcome {
  readonly result: SlidingWindowResult;
  /** The buckets still in the window after this call (this call included when it counted). */
  readonly buckets: readonly WindowBucket[];
  /** Whether `buckets` differs from what was read (else the store need not write). */
  readonly changed: boolean;
  /** When the last call leaves the window: the record may be dropped after that. */
  readonly expiresAt: number;
}

export function countSlidingWindow(
  stored: readonly WindowBucket[],
  request: SlidingWindowRequest,
  now: number,
  storedExpiresAt = 0,
): WindowOutcome {
  const period = request.periodSeconds * 1000;
  const current = Math.floor(now / bucketMs(request.periodSeconds));
  let used = 0;
  const live: WindowBucket[] = [];
  for (const bucket of stored)
    if (bucket.last > now - period) {
      used += bucket.count;
      live.push(bucket);
    }
  let changed = live.length !== stored.length;
  let expiresAt = storedExpiresAt;
  const allowed = request.mode === 'add' || used + request.amount <= request.limit;
  if (allowed && request.mode !== 'check' && request.amount > 0) {
    const at = live.findIndex((bucket) => bucket.index === current);
    const counted = at < 0 ? 0 : live[at]!.count;
    const bucket = { index: current, count: counted + request.amount, last: now };
    if (at < 0) live.push(bucket);
    else live[at] = bucket;
    used += request.amount;
    changed = true;
    expiresAt = now + period;
  }
  const remaining = Math.max(0, request.limit - used);
  if (allowed)
    return { result: { allowed, used, remaining, retryAfterSeconds: 0 }, buckets: live, changed, expiresAt };
  // Refused: the calls that must leave the window first are the oldest buckets'.
  const need = used + request.amount - request.limit;
  let freed = 0;
  let retryMs = period;
  for (const bucket of [...live].sort((a, b) => a.index - b.index)) {
    freed += bucket.count;
    if (freed >= need) {
      retryMs = bucket.last + period - now;
      break;
    }
  }
  return {
    result: { allowed, used, remaining, retryAfterSeconds: Math.max(1, Math.ceil(retryMs / 1000)) },
    buckets: live,
    changed,
    expiresAt,
  };
}

/**
 * The count of one quota window. A window is known by its index and by the period and origin it was computed
 * with, so a policy whose renewal period or first-period-start changed never reads a count of another window
 * that happens to share the index.
 */
export interface QuotaCounter {
  readonly index: number;
  readonly periodMs: number;
  readonly originMs: number;
  readonly calls: number;
  readonly bytes: number;
  /** When the window ends (Infinity: never); the counter may be dropped after that. */
  readonly expiresAt: number;
}

export interface QuotaOutcome {
  readonly result: QuotaResult;
  readonly counter: QuotaCounter;
  /** Whether `counter` must be written. */
  readonly changed: boolean;
}

export function countQuota(
  stored: QuotaCounter | undefined,
  request: QuotaRequest,
  now: number,
): QuotaOutcome {
  const { index, endMs } = quotaWindow(now, request.originMs, request.periodSeconds);
  const periodMs = request.periodSeconds * 1000;
  const sameWindow =
    stored !== undefined &&
    stored.index === index &&
    stored.periodMs === periodMs &&
    stored.originMs === request.originMs;
  let calls = sameWindow ? stored.calls : 0;
  let bytes = sameWindow ? stored.bytes : 0;
  let exceeded: QuotaResult['exceeded'];
  if (request.mode !== 'add') {
    const asked = request.mode === 'check' ? Math.max(1, request.calls) : request.calls;
    if (request.callLimit !== undefined && calls + asked > request.callLimit) exceeded = 'calls';
    else if (request.kilobyteLimit !== undefined && bytes >= request.kilobyteLimit * 1024)
      exceeded = 'bandwidth';
  }
  const counts = exceeded === undefined && request.mode !== 'check';
  if (counts) {
    calls += request.calls;
    bytes += request.bytes;
  }
  return {
    result: {
      allowed: exceeded === undefined,
      exceeded,
      calls,
      bytes,
      renewsInSeconds: endMs === undefined ? undefined : Math.max(1, Math.ceil((endMs - now) / 1000)),
    },
    counter: {
      index,
      periodMs,
      originMs: request.originMs,
      calls,
      bytes,
      expiresAt: endMs ?? Number.POSITIVE_INFINITY,
    },
    changed: counts,
  };
}

/** A held concurrency slot: its token and when its lease runs out. */
export interface Slot {
  readonly token: string;
  readonly expiresAt: number;
}

/** The slots after taking one for `token`, or undefined when `max` are held (expired leases do not count). */
export function takeSlot(
  stored: readonly Slot[],
  max: number,
  leaseSeconds: number,
  now: number,
  token: string,
): Slot[] | undefined {
  const held = stored.filter((slot) => slot.expiresAt > now);
  if (held.length >= max) return undefined;
  held.push({ token, expiresAt: now + leaseSeconds * 1000 });
  return held;
}
