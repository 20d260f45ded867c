/**
 * The counters behind rate-limit, quota and limit-concurrency, as a contract between three modules: `policy/`
 * counts with them, `state/` implements them (in-process and Redis), the engine hands the one to the other. It
 * lives here, beside them, because `state/` imports nothing of the project and `policy/` only `expr/`; it holds
 * types only, so neither gains a dependency at run time.
 */

/**
 * How a limit counts: `consume` counts `amount` only when the limit allows it (atomically); `check` answers the
 * same question without counting (increment-condition counts later, on the response); `add` counts without
 * asking (that later count, bandwidth).
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

/** The counters as a backend of `state/` offers them. */
export interface LimitStore {
  slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult>;
  quota(request: QuotaRequest): Promise<QuotaResult>;
  /** A slot among `max` for `key`, or undefined when all are held. */
  acquire(key: string, max: number, leaseSeconds: number): Promise<ConcurrencyLease | undefined>;
  release(lease: ConcurrencyLease): Promise<void>;
}

/**
 * The counters as policies see them: the same store, but how long a slot is leased is the engine's choice, not
 * the element's. When the shared store cannot answer, the engine applies the configured failure mode of the
 * policy kind itself (admit, or refuse with 503 StateUnavailable); elements just use the answer.
 */
export interface LimitCounters extends Omit<LimitStore, 'acquire'> {
  /** A slot among `max` for `key`, or undefined when all are held. */
  acquire(key: string, max: number): Promise<ConcurrencyLease | undefined>;
}
