/**
 * Counters behind rate-limit, quota and limit-concurrency, as one interface with three backends: in-process
 * (memory-limits.ts, one engine process, lost with it), embedded (embedded-limits.ts, LMDB in `state.dataDir`:
 * kept across restarts and shared by the engine processes of one machine) and Redis (redis-limits.ts, any number
 * of engine processes, each operation one atomic Lua script). All give the same answers for the same sequence of
 * calls (limit-rules.ts is the specification); the tests run one suite against the three.
 *
 * Time is the backend's: the in-process and embedded stores read their injected clock (the machine's), the Redis
 * store reads Redis's `TIME`, so engine processes whose clocks disagree still share one window.
 */

// The counter contract is shared with policy/ and the engine; state/ implements it.
export type {
  ConcurrencyLease,
  CountMode,
  LimitStore,
  QuotaRequest,
  QuotaResult,
  SlidingWindowRequest,
  SlidingWindowResult,
} from '../limit-counters.js';

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
