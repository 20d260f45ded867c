/**
 * Counters behind rate-limit, quota and limit-concurrency, as one interface with two backends: in-process
 * (memory-limits.ts, one engine process) and Redis (redis-limits.ts, any number of engine processes, each
 * operation one atomic Lua script). Both give the same answers for the same sequence of calls; the tests run one
 * suite against both.
 *
 * Time is the backend's: the in-process store reads its injected clock, the Redis store reads Redis's `TIME`, so
 * engine processes whose clocks disagree still share one window.
 */

/**
 * `consume` counts `amount` only when the limit allows it; `check` answers the same question without counting
 * (increment-condition counts later, on the response); `add` counts without asking (that later count).
 */
export type CountMode = 'consume' | 'check' | 'add';

export interface SlidingWindowRequest {
  readonly key: string;
  readonly limit: number;
  readonly periodSeconds: number;
  readonly amount: number;
  readonly mode: CountMode;
}

export interface SlidingWindowResult {
  readonly allowed: boolean;
  /** Calls counted in the window after this request. */
  readonly used: number;
  /** `limit - used`, never below 0. */
  readonly remaining: number;
  /** When refused: whole seconds until enough calls leave the window (at least 1); 0 when allowed. */
  readonly retryAfterSeconds: number;
}

export interface QuotaRequest {
  readonly key: string;
  /** Fixed windows of this length; 0 = one window that never renews. */
  readonly periodSeconds: number;
  /** Where the first window starts (ms since the epoch). */
  readonly originMs: number;
  readonly callLimit: number | undefined;
  /** In kilobytes (1024 bytes), as quota/@bandwidth. */
  readonly kilobyteLimit: number | undefined;
  readonly calls: number;
  readonly bytes: number;
  readonly mode: CountMode;
}

export interface QuotaResult {
  readonly allowed: boolean;
  /** Which limit refused the request. */
  readonly exceeded: 'calls' | 'bandwidth' | undefined;
  readonly calls: number;
  readonly bytes: number;
  /** Whole seconds until the current window ends (at least 1); undefined when the window never renews. */
  readonly renewsInSeconds: number | undefined;
}

/** A slot held by limit-concurrency until `release`, or until the lease runs out if the holder never returns. */
export interface ConcurrencyLease {
  readonly key: string;
  readonly token: string;
}

export interface LimitStore {
  slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult>;
  quota(request: QuotaRequest): Promise<QuotaResult>;
  /** A slot among `max` for `key`, or undefined when all are held. */
  acquire(key: string, max: number, leaseSeconds: number): Promise<ConcurrencyLease | undefined>;
  release(lease: ConcurrencyLease): Promise<void>;
}

/** The shared store could not answer in time (down, slow, or not connected yet). */
export class StateUnavailableError extends Error {
  override readonly name = 'StateUnavailableError';
  readonly code = 'STATE_UNAVAILABLE';
  constructor(
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
  }
}

/**
 * Windows are counted in buckets so memory per key does not grow with the call rate: one-second buckets up to a
 * 300-second period (API Management's maximum for rate-limit), coarser beyond, never more than 300 buckets. Each
 * bucket keeps its count and the time of its latest call; the bucket leaves the window when that call does, so a
 * client is never admitted early (at most one bucket late), and Retry-After is exact when a bucket holds one call.
 */
export function bucketMs(periodSeconds: number): number {
  return Math.max(1000, Math.ceil(periodSeconds / 300) * 1000);
}

/** The calls/bytes/window arithmetic of `quota`, shared by both backends' tests as the specification. */
export function quotaWindow(
  nowMs: number,
  originMs: number,
  periodSeconds: number,
): { index: number; endMs: number | undefined } {
  if (periodSeconds <= 0) return { index: 0, endMs: undefined };
  const period = periodSeconds * 1000;
  const index = Math.floor((nowMs - originMs) / period);
  return { index, endMs: originMs + (index + 1) * period };
}
