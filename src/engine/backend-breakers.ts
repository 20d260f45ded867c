/**
 * API Management's backend circuit breaker (https://learn.microsoft.com/azure/api-management/backends#circuit-breaker):
 * a backend whose answers match its rule's `statusCodeRanges` `count` times within `interval` is tripped — it gets
 * no requests — for `tripDuration`, or for the `Retry-After` its tripping answer carried when `acceptRetryAfter`.
 * Envoy's outlier detection counts 5xx and gateway failures only and ejects for its own back-off, so a breaker that
 * trips on 429 for the backend's Retry-After is the engine's.
 *
 * The counts and the trips are kept in the shared state (the limit counters of the `state` section, and the value
 * cache with Redis or a database of the embedded store), so the engines of a gateway agree on which backends are
 * tripped; API Management's instances do not
 * (its docs call its tripping approximate). Ours is approximate where two engines count failures at the same moment
 * (a failure may be counted after another engine's trip) and where the store is down (each engine then trips on
 * what it saw itself).
 */
import type { CircuitBreakerRuleConfig } from '../config/backend-schema.js';
import { durationSeconds } from '../config/backend-schema.js';
import { firstHeader, type HeaderFields } from '../extproc/headers.js';
import type { LimitCounters } from '../limit-counters.js';
import type { Clock, ValueCache } from '../policy/index.js';

/** Where trips and failure counts are kept: the shared state in the engine, a map in a unit test. */
export interface BreakerStore {
  /** When the backend's trip ends (ms since the epoch), if it is tripped. */
  trippedUntil(backendId: string): Promise<number | undefined>;
  trip(backendId: string, untilMs: number): Promise<void>;
  /** Counts one failure; answers the failures within the last `intervalSeconds`, this one included. */
  countFailure(backendId: string, intervalSeconds: number): Promise<number>;
  /** Counts one answer, failure or not (rules with a `percentage`); answers those within the last `intervalSeconds`. */
  countAnswer(backendId: string, intervalSeconds: number): Promise<number>;
}

/** Where the trips themselves are kept: when each backend's trip ends, by key. */
export interface TripTable {
  get(key: string): Promise<number | undefined>;
  /** Kept until `untilMs` at least. */
  set(key: string, untilMs: number): Promise<void>;
}

/** Trips in the value cache: shared by every engine when the cache is Redis's, else this engine's own. */
export function valueCacheTrips(values: ValueCache): TripTable {
  return {
    async get(key) {
      const until = await values.get(key);
      return typeof until === 'number' ? until : undefined;
    },
    async set(key, untilMs) {
      const seconds = Math.max(1, Math.ceil((untilMs - Date.now()) / 1000));
      await values.set(key, untilMs, seconds);
    },
  };
}

/**
 * Trips in a database of the embedded store (`state.dataDir`), which every engine of the machine opens: they honour
 * each other's trips. An ended trip is overwritten by the next, or read as ended.
 */
export function databaseTrips(database: {
  get(key: string): unknown;
  put(key: string, value: number): Promise<unknown>;
}): TripTable {
  return {
    get: async (key) => {
      const until = database.get(key);
      return typeof until === 'number' ? until : undefined;
    },
    set: async (key, untilMs) => {
      await database.put(key, untilMs);
    },
  };
}

/** The breaker store over a trip table and the engine's limit counters (failures in a window). */
export function sharedBreakerStore(
  trips: TripTable,
  limits: Pick<LimitCounters, 'slidingWindow'>,
): BreakerStore {
  const key = (backendId: string) => `portcullis:backend-breaker:${backendId}`;
  const counted = async (counter: string, periodSeconds: number) =>
    (
      await limits.slidingWindow({
        key: counter,
        limit: Number.MAX_SAFE_INTEGER,
        periodSeconds,
        amount: 1,
        mode: 'add',
      })
    ).used;
  return {
    trippedUntil: (backendId) => trips.get(key(backendId)),
    trip: (backendId, untilMs) => trips.set(key(backendId), untilMs),
    countFailure: (backendId, intervalSeconds) => counted(`${key(backendId)}:failures`, intervalSeconds),
    countAnswer: (backendId, intervalSeconds) => counted(`${key(backendId)}:answers`, intervalSeconds),
  };
}

/** One backend's rule, parsed once. */
interface Rule {
  /** Trips at this many failures within the interval… */
  readonly count: number | undefined;
  /** …or when this percentage of the answers within the interval are failures. */
  readonly percentage: number | undefined;
  readonly intervalSeconds: number;
  readonly tripSeconds: number;
  readonly acceptRetryAfter: boolean;
  readonly ranges: readonly { readonly min: number; readonly max: number }[];
}

export class BackendBreakers {
  readonly #rules = new Map<string, Rule>();
  /** Trips this engine knows of (its own and those it read): a tripped backend costs no store read per request. */
  readonly #known = new Map<string, number>();

  constructor(
    rules: Iterable<readonly [string, CircuitBreakerRuleConfig]>,
    private readonly store: BreakerStore,
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    for (const [backendId, rule] of rules) {
      const condition = rule.failureCondition!;
      this.#rules.set(backendId, {
        count: condition.count,
        percentage: condition.percentage,
        intervalSeconds: durationSeconds(condition.interval)!,
        tripSeconds: durationSeconds(rule.tripDuration)!,
        acceptRetryAfter: rule.acceptRetryAfter,
        ranges: condition.statusCodeRanges ?? [],
      });
    }
  }

  /** Whether any backend has a breaker: only then are the answers of named backends watched. */
  get watching(): boolean {
    return this.#rules.size > 0;
  }

  /** Whether the backend has a breaker: only then are its answers watched. */
  has(backendId: string): boolean {
    return this.#rules.has(backendId);
  }

  /** Whether the backend is tripped now. A store that cannot answer: only the trips this engine knows of. */
  async isTripped(backendId: string): Promise<boolean> {
    if (!this.#rules.has(backendId)) return false;
    const now = this.clock.now();
    const known = this.#known.get(backendId);
    if (known !== undefined && known > now) return true;
    let until: number | undefined;
    try {
      until = await this.store.trippedUntil(backendId);
    } catch {
      return false;
    }
    if (until !== undefined && until > now) this.#known.set(backendId, until);
    return until !== undefined && until > now;
  }

  /**
   * The backend answered `status` (with these headers): a failure by its rule is counted, and the count-th within
   * the interval trips it. Returns when the trip ends, if this answer tripped it.
   */
  async observe(
    backendId: string,
    status: number,
    retryAfter: string | undefined,
  ): Promise<number | undefined> {
    const rule = this.#rules.get(backendId);
    if (rule === undefined) return undefined;
    const failed = rule.ranges.some((range) => status >= range.min && status <= range.max);
    if (!failed && rule.percentage === undefined) return undefined;
    const now = this.clock.now();
    let tripping: boolean;
    try {
      // A percentage needs every answer counted, failures or not; a count only the failures.
      const answers =
        rule.percentage === undefined ? 0 : await this.store.countAnswer(backendId, rule.intervalSeconds);
      if (!failed) return undefined;
      const failures = await this.store.countFailure(backendId, rule.intervalSeconds);
      tripping =
        (rule.count !== undefined && failures >= rule.count) ||
        (rule.percentage !== undefined && failures * 100 >= rule.percentage * answers);
    } catch {
      // The store cannot count: a failure this engine saw trips on its own.
      tripping = failed;
    }
    if (!tripping) return undefined;
    const fromHeader = rule.acceptRetryAfter ? retryAfterSeconds(retryAfter, now) : undefined;
    const until = now + (fromHeader ?? rule.tripSeconds) * 1000;
    this.#known.set(backendId, until);
    try {
      await this.store.trip(backendId, until);
    } catch {
      // This engine still knows; the others learn from their own failures.
    }
    return until;
  }
}

/** `Retry-After` (RFC 9110 §10.2.3) as seconds from `nowMs`: delay-seconds, or an HTTP-date. */
export function retryAfterSeconds(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return seconds > 0 ? seconds : undefined;
  }
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  const seconds = Math.ceil((date - nowMs) / 1000);
  return seconds > 0 ? seconds : undefined;
}

/** Tells the breaker of the backend the request went to (if it has one) of its answer's status and Retry-After. */
export async function observeBreaker(
  breakers: BackendBreakers,
  backendId: string | undefined,
  headers: HeaderFields,
): Promise<void> {
  if (backendId === undefined || !breakers.has(backendId)) return;
  const status = Number(firstHeader(headers, ':status'));
  await breakers.observe(backendId, status, firstHeader(headers, 'retry-after'));
}
