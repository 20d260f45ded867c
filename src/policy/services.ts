/**
 * What the policy runner needs from the outside world, injected so `src/policy` stays transport-free and
 * testable: caches, named backends, an HTTP client (openid-config/JWKS, send-request), a clock, a logger, a
 * trace sink and counters. The engine wires real implementations (src/state, src/catalog); tests use fakes.
 */

/** A response kept by cache-store and served by cache-lookup. */
export interface CachedResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

/**
 * API Management's `caching-type`: the built-in (in-process) cache, the external one (Redis), or the external one
 * when configured and the built-in one otherwise. Caches that have only one tier ignore it.
 */
export type CachingType = 'internal' | 'external' | 'prefer-external';

export interface ResponseCache {
  get(key: string, caching?: CachingType): Promise<CachedResponse | undefined>;
  set(key: string, value: CachedResponse, ttlSeconds: number, caching?: CachingType): Promise<void>;
}

/** cache-lookup-value / cache-store-value / cache-remove-value. Values are expression runtime values. */
export interface ValueCache {
  get(key: string, caching?: CachingType): Promise<unknown>;
  set(key: string, value: unknown, ttlSeconds: number, caching?: CachingType): Promise<void>;
  delete(key: string, caching?: CachingType): Promise<void>;
}

/** A named backend (`set-backend-service backend-id`). */
export interface BackendInfo {
  readonly id: string;
  readonly url: string;
}

export interface BackendLookup {
  get(id: string): BackendInfo | undefined;
}

export interface HttpRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Buffer;
  readonly timeoutMs: number;
}

export interface HttpResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
}

/** Rejects on connection failure or timeout (an Error whose `code` is 'TIMEOUT' for a timeout). */
export type HttpFetcher = (request: HttpRequest) => Promise<HttpResponse>;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits (retry intervals); tests pass a fake that returns at once. */
  sleep(ms: number): Promise<void>;
}

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export type TraceSeverity = 'verbose' | 'information' | 'error';

export interface TraceEntry {
  readonly requestId: string;
  readonly source: string;
  readonly severity: TraceSeverity;
  readonly message: string;
  readonly metadata: readonly (readonly [string, string])[];
}

export interface TraceSink {
  write(entry: TraceEntry): void;
}

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
  /** Whole seconds until the current window ends (at least 1); undefined when it never renews. */
  readonly renewsInSeconds: number | undefined;
}

/** A limit-concurrency slot, held until released (or until the engine's lease on it runs out). */
export interface ConcurrencyLease {
  readonly key: string;
  readonly token: string;
}

/**
 * The counters behind rate-limit, quota and limit-concurrency: in-process, or shared by every engine process
 * through Redis (src/state). When the shared store cannot answer, the engine applies the configured failure mode
 * of the policy kind itself (admit, or refuse with 503 StateUnavailable); elements just use the answer.
 */
export interface LimitCounters {
  slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult>;
  quota(request: QuotaRequest): Promise<QuotaResult>;
  /** A slot among `max` for `key`, or undefined when all are held. */
  acquire(key: string, max: number): Promise<ConcurrencyLease | undefined>;
  release(lease: ConcurrencyLease): Promise<void>;
}

/**
 * Where log-to-eventhub writes: an event stream per logger id (Redis streams or a file in the engine; API
 * Management would use Azure Event Hubs).
 */
export interface EventLog {
  append(
    loggerId: string,
    message: string,
    partition: { readonly id?: string; readonly key?: string },
  ): Promise<void>;
}

/** Custom metrics from emit-metric (API Management sends them to Application Insights; the engine to Prometheus). */
export interface MetricSink {
  emit(metric: {
    readonly name: string;
    readonly namespace: string;
    readonly value: number;
    readonly dimensions: readonly (readonly [string, string])[];
  }): void;
}

export type CounterOutcome = 'allowed' | 'refused' | 'failed';

/** Per-element counts; the engine exports them as Prometheus metrics. */
export interface PolicyCounters {
  count(element: string, outcome: CounterOutcome, reason?: string): void;
}

export interface PolicyServices {
  readonly responseCache: ResponseCache;
  readonly valueCache: ValueCache;
  readonly limits: LimitCounters;
  readonly eventLog: EventLog;
  /** Optional: without a sink, emit-metric writes the metric to the logger (info) so nothing is lost silently. */
  readonly metrics?: MetricSink;
  readonly backends: BackendLookup;
  readonly fetch: HttpFetcher;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly trace: TraceSink;
  readonly counters: PolicyCounters;
}
