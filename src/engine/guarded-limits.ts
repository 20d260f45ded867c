import type { Logger } from '../log.js';
import { type PolicyCounters, PolicyError } from '../policy/index.js';
import {
  type ConcurrencyLease,
  type LimitStore,
  type QuotaRequest,
  type QuotaResult,
  type SlidingWindowRequest,
  type SlidingWindowResult,
  StateUnavailableError,
} from '../state/limits.js';
import type { StateConfig } from '../state/options.js';

/** What a shared-state failure is reported as: element label and LastError reason of a fail-closed refusal. */
export const STATE_UNAVAILABLE = 'StateUnavailable';

type LimitKind = 'rateLimit' | 'quota' | 'concurrency';
const KIND_ELEMENT: Record<LimitKind, string> = {
  rateLimit: 'rate-limit',
  quota: 'quota',
  concurrency: 'limit-concurrency',
};

/**
 * Logs a failing dependency once, then at most every `everyMs` with how many failures were not logged. `problem` is
 * the whole message (also the key the interval is kept by), so each dependency says what failed in its own words.
 */
export class FailureLog {
  readonly #last = new Map<string, { at: number; suppressed: number }>();
  constructor(
    private readonly logger: Logger,
    private readonly everyMs = 10_000,
  ) {}

  report(problem: string, error: unknown, fields: Record<string, unknown> = {}): void {
    const now = Date.now();
    const last = this.#last.get(problem);
    if (last !== undefined && now - last.at < this.everyMs) {
      last.suppressed++;
      return;
    }
    this.#last.set(problem, { at: now, suppressed: 0 });
    this.logger.warn(problem, {
      ...fields,
      error: error instanceof Error ? error.message : String(error),
      ...(last === undefined ? {} : { notLoggedSince: last.suppressed }),
    });
  }
}

/**
 * The limit counters as policies see them: a StateUnavailableError from Redis becomes the configured behaviour of
 * the policy kind — `open` admits the request, `closed` refuses it with 503 (LastError.Reason StateUnavailable) —
 * and is always counted (element × failed × StateUnavailable) and logged (rate-limited).
 */
export class GuardedLimits {
  constructor(
    private readonly store: LimitStore,
    private readonly modes: StateConfig['onRedisFailure'],
    private readonly counters: PolicyCounters,
    private readonly failures: FailureLog,
    /** How long a slot is held at most when its request never reports back. */
    private readonly leaseSeconds = 330,
  ) {}

  async slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult> {
    try {
      return await this.store.slidingWindow(request);
    } catch (error) {
      this.#fail('rateLimit', error, request.mode === 'add');
      return { allowed: true, used: 0, remaining: request.limit, retryAfterSeconds: 0 };
    }
  }

  async quota(request: QuotaRequest): Promise<QuotaResult> {
    try {
      return await this.store.quota(request);
    } catch (error) {
      this.#fail('quota', error, request.mode === 'add');
      return { allowed: true, exceeded: undefined, calls: 0, bytes: 0, renewsInSeconds: undefined };
    }
  }

  /** Fail-open hands out a lease that release ignores. */
  async acquire(
    key: string,
    max: number,
    leaseSeconds = this.leaseSeconds,
  ): Promise<ConcurrencyLease | undefined> {
    try {
      return await this.store.acquire(key, max, leaseSeconds);
    } catch (error) {
      this.#fail('concurrency', error, false);
      return { key, token: '' };
    }
  }

  async release(lease: ConcurrencyLease): Promise<void> {
    if (lease.token === '') return;
    try {
      await this.store.release(lease);
    } catch (error) {
      // The lease expires on its own; nothing to refuse any more.
      this.#fail('concurrency', error, true);
    }
  }

  /** `afterResponse`: counting at the end of a request can only be lost, never refuse anything. */
  #fail(kind: LimitKind, error: unknown, afterResponse: boolean): void {
    if (!(error instanceof StateUnavailableError)) throw error;
    const closed = this.modes[kind] === 'closed' && !afterResponse;
    this.counters.count(KIND_ELEMENT[kind], 'failed', STATE_UNAVAILABLE);
    this.failures.report(`shared state unavailable: ${KIND_ELEMENT[kind]}`, error, {
      failMode: closed ? 'closed' : 'open',
    });
    if (closed)
      throw new PolicyError(
        STATE_UNAVAILABLE,
        `${KIND_ELEMENT[kind]} could not reach its shared counters: ${error.message}`,
        503,
        'Service unavailable',
        [['Retry-After', '1']],
      );
  }
}
