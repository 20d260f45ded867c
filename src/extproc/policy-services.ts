import {
  CsChar,
  CsDateTime,
  CsDecimal,
  CsDouble,
  CsGuid,
  CsTimeSpan,
  JToken,
  parseJson,
  toDotNetString,
} from '../expr/index.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import {
  type BackendLookup,
  type CachedResponse,
  type HttpFetcher,
  type Logger,
  type PolicyCounters,
  PolicyError,
  type PolicyServices,
  type TraceSink,
} from '../policy/index.js';
import { redactFields, redactText } from '../redact.js';
import { RedisEventStream, type SendOutcome } from '../state/event-stream.js';
import {
  type ConcurrencyLease,
  type LimitStore,
  type QuotaRequest,
  type QuotaResult,
  type SlidingWindowRequest,
  type SlidingWindowResult,
  StateUnavailableError,
} from '../state/limits.js';
import { MemoryLimitStore } from '../state/memory-limits.js';
import { type StateConfig, stateConfigSchema } from '../state/options.js';
import { RedisByteCache } from '../state/redis-cache.js';
import { RedisConnection } from '../state/redis-connection.js';
import { RedisLimitStore } from '../state/redis-limits.js';
import { type ByteCodec, type CachingType, TieredCache } from '../state/tiered-cache.js';

/** Structured log lines on stderr, one JSON object each, with credentials redacted (see redact.ts). */
export const jsonLogger: Logger = {
  debug: () => {},
  info: (message, fields) => log('info', message, fields),
  warn: (message, fields) => log('warn', message, fields),
  error: (message, fields) => log('error', message, fields),
};

/**
 * Log lines written since the last flush. A write to stderr is a system call (synchronous for files and pipes), one
 * per request for the access log: lines are gathered and written together once the current burst of work is done
 * (setImmediate), or when 64 KiB wait, and before the process exits.
 */
let pendingLog = '';
let flushScheduled = false;
const flushAtBytes = 64 * 1024;

function log(level: string, message: string, fields?: Record<string, unknown>): void {
  pendingLog += `${logLine(new Date().toISOString(), level, redactText(message), redactFields(fields))}\n`;
  if (pendingLog.length >= flushAtBytes) flushLog();
  else if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushLog);
  }
}

/**
 * `JSON.stringify({ time, level, message, ...fields })` without copying `fields` into a new object (once per
 * request for the access log). Fields that would come out differently from the copy — a key named like one of the
 * three, an array-index key (ordered first), a toJSON method — take the general path.
 */
function logLine(time: string, level: string, message: string, fields?: Record<string, unknown>): string {
  if (fields === undefined || fields === null) return JSON.stringify({ time, level, message });
  if (typeof fields.toJSON === 'function') return JSON.stringify({ time, level, message, ...fields });
  for (const key of Object.keys(fields)) {
    const first = key.charCodeAt(0);
    if (key === 'time' || key === 'level' || key === 'message' || (first >= 48 && first <= 57))
      return JSON.stringify({ time, level, message, ...fields });
  }
  const rest = JSON.stringify(fields);
  const head = `{"time":${JSON.stringify(time)},"level":${JSON.stringify(level)},"message":${JSON.stringify(message)}`;
  return rest === '{}' ? `${head}}` : `${head},${rest.slice(1)}`;
}

/** Writes the gathered log lines now. */
export function flushLog(): void {
  flushScheduled = false;
  if (pendingLog === '') return;
  const lines = pendingLog;
  pendingLog = '';
  process.stderr.write(lines);
}

process.on('exit', flushLog);

/** Per element × outcome × reason counts, read by the metrics endpoint. */
export class ElementCounters implements PolicyCounters {
  readonly counts = new Map<string, number>();
  /** element → outcome → reason → key in `counts`, so counting (several times per request) builds no string. */
  readonly #keys = new Map<string, Map<string, Map<string, string>>>();

  count(element: string, outcome: 'allowed' | 'refused' | 'failed', reason = ''): void {
    let byOutcome = this.#keys.get(element);
    if (byOutcome === undefined) {
      byOutcome = new Map();
      this.#keys.set(element, byOutcome);
    }
    let byReason = byOutcome.get(outcome);
    if (byReason === undefined) {
      byReason = new Map();
      byOutcome.set(outcome, byReason);
    }
    let key = byReason.get(reason);
    // Reasons may be unbounded in principle; only the usual small set is remembered.
    if (key === undefined) {
      key = `${element}\u0000${outcome}\u0000${reason}`;
      if (byReason.size < 64) byReason.set(reason, key);
    }
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  get(element: string, outcome: 'allowed' | 'refused' | 'failed', reason = ''): number {
    return this.counts.get(`${element}\u0000${outcome}\u0000${reason}`) ?? 0;
  }

  *entries(): Generator<{ element: string; outcome: string; reason: string; value: number }> {
    for (const [key, value] of this.counts) {
      const [element, outcome, reason] = key.split('\u0000') as [string, string, string];
      yield { element, outcome, reason, value };
    }
  }
}

const fetchWithTimeout: HttpFetcher = async (request) => {
  const response = await fetch(request.url, {
    method: request.method,
    headers: request.headers.map(([name, value]) => [name, value] as [string, string]),
    ...(request.body ? { body: request.body } : {}),
    signal: AbortSignal.timeout(request.timeoutMs),
    redirect: 'manual',
  }).catch((error: unknown) => {
    if (error instanceof DOMException && error.name === 'TimeoutError')
      throw Object.assign(new Error('timeout'), { code: 'TIMEOUT' });
    throw error;
  });
  return {
    status: response.status,
    reason: response.statusText,
    headers: [...response.headers.entries()],
    body: Buffer.from(await response.arrayBuffer()),
  };
};

/** What a shared-state failure is reported as: element label and LastError reason of a fail-closed refusal. */
export const STATE_UNAVAILABLE = 'StateUnavailable';

type LimitKind = 'rateLimit' | 'quota' | 'concurrency';
const KIND_ELEMENT: Record<LimitKind, string> = {
  rateLimit: 'rate-limit',
  quota: 'quota',
  concurrency: 'limit-concurrency',
};

/** Logs a failing dependency once, then at most every `everyMs` with how many failures were not logged. */
export class FailureLog {
  readonly #last = new Map<string, { at: number; suppressed: number }>();
  constructor(
    private readonly logger: Logger,
    private readonly everyMs = 10_000,
  ) {}

  report(what: string, error: unknown, fields: Record<string, unknown> = {}): void {
    const now = Date.now();
    const last = this.#last.get(what);
    if (last !== undefined && now - last.at < this.everyMs) {
      last.suppressed++;
      return;
    }
    this.#last.set(what, { at: now, suppressed: 0 });
    this.logger.warn(`shared state unavailable: ${what}`, {
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
    this.failures.report(KIND_ELEMENT[kind], error, { failMode: closed ? 'closed' : 'open' });
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

/** log-to-eventhub's sink: never waits; events for unknown loggers or beyond the buffer are counted. */
export interface EngineEventSink {
  send(loggerId: string, message: string, partition?: { id?: string; key?: string }): SendOutcome;
}

/*
 * Values in the external cache: expression runtime values as tagged JSON. Values that only make sense inside one
 * process (a response object, a JWT instance …) are not stored externally (logged, as API Management's store is
 * asynchronous and best effort).
 */
type Encoded =
  | { t: 's'; v: string }
  | { t: 'b'; v: boolean }
  | { t: 'n' }
  | { t: 'i'; v: number }
  | { t: 'l'; v: string }
  | { t: 'd'; v: number }
  | { t: 'm'; v: number }
  | { t: 'c'; v: number }
  | { t: 'dt'; v: string; k: string }
  | { t: 'g'; v: string }
  | { t: 'ts'; v: string }
  | { t: 'j'; v: string };

export const valueCodec: ByteCodec<{ value: unknown }> = {
  encode({ value }) {
    let e: Encoded | undefined;
    if (typeof value === 'string') e = { t: 's', v: value };
    else if (typeof value === 'boolean') e = { t: 'b', v: value };
    else if (value === null || value === undefined) e = { t: 'n' };
    else if (typeof value === 'number') e = { t: 'i', v: value };
    else if (typeof value === 'bigint') e = { t: 'l', v: value.toString() };
    else if (value instanceof CsDouble) e = { t: 'd', v: value.v };
    else if (value instanceof CsDecimal) e = { t: 'm', v: value.v };
    else if (value instanceof CsChar) e = { t: 'c', v: value.code };
    else if (value instanceof CsDateTime) e = { t: 'dt', v: value.ticks.toString(), k: value.kind };
    else if (value instanceof CsGuid) e = { t: 'g', v: value.value };
    else if (value instanceof CsTimeSpan) e = { t: 'ts', v: value.ticks.toString() };
    else if (value instanceof JToken) e = { t: 'j', v: toDotNetString(value) };
    return e === undefined ? undefined : Buffer.from(JSON.stringify(e));
  },
  decode(bytes) {
    const e = JSON.parse(bytes.toString('utf8')) as Encoded;
    switch (e.t) {
      case 's':
      case 'b':
      case 'i':
        return { value: e.v };
      case 'n':
        return { value: null };
      case 'l':
        return { value: BigInt(e.v) };
      case 'd':
        return { value: new CsDouble(e.v) };
      case 'm':
        return { value: new CsDecimal(e.v) };
      case 'c':
        return { value: new CsChar(e.v) };
      case 'dt':
        return { value: new CsDateTime(BigInt(e.v), e.k as CsDateTime['kind']) };
      case 'g':
        return { value: new CsGuid(e.v) };
      case 'ts':
        return { value: new CsTimeSpan(BigInt(e.v)) };
      case 'j':
        return { value: parseJson(e.v) };
    }
  },
};

/** A cached response in Redis: one JSON line (status, reason, headers), then the body bytes. */
export const responseCodec: ByteCodec<CachedResponse> = {
  encode(value) {
    const head = Buffer.from(
      `${JSON.stringify({ status: value.status, reason: value.reason, headers: value.headers })}\n`,
    );
    return Buffer.concat([head, value.body]);
  },
  decode(bytes) {
    const newline = bytes.indexOf(0x0a);
    const head = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Omit<CachedResponse, 'body'>;
    return { ...head, body: Buffer.from(bytes.subarray(newline + 1)) };
  },
};

const ownCopy = (value: unknown): unknown => (value instanceof JToken ? value.clone() : value);

export interface EngineServicesOptions {
  readonly backends: ReadonlyMap<string, string>;
  /** The configuration's `state` section (absent: everything in-process with the defaults). */
  readonly state?: Partial<StateConfig>;
  readonly logger?: Logger;
  readonly trace?: TraceSink;
  /** Client certificates the gateway presents to backends (authentication-certificate). */
  readonly backendCertificates?: BackendCertificates;
}

export interface EngineServices extends PolicyServices {
  readonly counters: ElementCounters;
  readonly limits: GuardedLimits;
  readonly events: EngineEventSink;
  /** log-to-eventhub's service: queues and returns at once; rejects only for a logger-id not configured. */
  readonly eventLog: {
    append(
      loggerId: string,
      message: string,
      partition: { readonly id?: string; readonly key?: string },
    ): Promise<void>;
  };
  /** Seconds a limit-concurrency slot is held at most. */
  readonly concurrencyLeaseSeconds: number;
  /** The Redis connection when configured (health, tests). */
  readonly redis: RedisConnection | undefined;
  readonly eventStream: RedisEventStream | undefined;
  /** Writes queued events and closes the Redis connection. */
  close(): Promise<void>;
}

/**
 * The engine's policy services: caches (in-process bounded in bytes, and Redis when configured, chosen per
 * element by caching-type), limit counters (in-process or Redis), the log-to-eventhub sink, named backends,
 * fetch, clock, log, counters.
 */
export function createEngineServices(options: EngineServicesOptions): EngineServices {
  const state = stateConfigSchema.parse(options.state ?? {});
  const logger = options.logger ?? jsonLogger;
  const counters = new ElementCounters();
  const failures = new FailureLog(logger);
  const redis =
    state.redis === undefined
      ? undefined
      : new RedisConnection({
          url: state.redis.url,
          keyPrefix: state.redis.keyPrefix,
          commandTimeoutMs: state.redis.commandTimeoutMs,
          connectTimeoutMs: state.redis.connectTimeoutMs,
          onStatus: (status, detail) =>
            status === 'ready'
              ? logger.info('redis reconnected', { url: detail })
              : logger.warn('redis connection lost', { url: state.redis?.url, detail }),
        });

  const cacheFailure = (operation: string, error: unknown) => {
    counters.count('cache', 'failed', operation === 'encode' ? 'NotSerializable' : STATE_UNAVAILABLE);
    failures.report(`cache ${operation}`, error);
  };
  const responses = new TieredCache<CachedResponse>({
    internal: {
      maxBytes: state.cache.internalBytes,
      maxEntryBytes: state.cache.maxEntryBytes,
      sizeOf: (value) =>
        value.body.length + value.headers.reduce((sum, [name, v]) => sum + name.length + v.length, 0),
    },
    external: redis && new RedisByteCache(redis, 'resp', state.cache.maxEntryBytes),
    codec: responseCodec,
    onFailure: cacheFailure,
  });
  const values = new TieredCache<{ value: unknown }>({
    internal: {
      maxBytes: state.cache.internalBytes,
      maxEntryBytes: state.cache.maxEntryBytes,
      // The encoded size is what the value would take in Redis; values that cannot be encoded count as 256 bytes.
      sizeOf: (entry) =>
        typeof entry.value === 'string' ? entry.value.length * 2 : (valueCodec.encode(entry)?.length ?? 256),
    },
    external: redis && new RedisByteCache(redis, 'val', state.cache.maxEntryBytes),
    codec: valueCodec,
    onFailure: cacheFailure,
  });

  const limits = new GuardedLimits(
    redis === undefined ? new MemoryLimitStore() : new RedisLimitStore(redis),
    state.onRedisFailure,
    counters,
    failures,
    state.concurrencyLeaseSeconds,
  );

  const eventStream =
    redis === undefined
      ? undefined
      : new RedisEventStream(redis, {
          targets: new Map(Object.entries(state.loggers)),
          bufferSize: state.eventBuffer,
          onError: (message) => failures.report('log-to-eventhub', new Error(message)),
        });
  const events: EngineEventSink = {
    send(loggerId, message, partition) {
      const outcome: SendOutcome =
        eventStream?.send({
          loggerId,
          message,
          ...(partition?.id === undefined ? {} : { partitionId: partition.id }),
          ...(partition?.key === undefined ? {} : { partitionKey: partition.key }),
        }) ?? 'unknown-logger';
      if (outcome === 'dropped') counters.count('log-to-eventhub', 'failed', 'EventDropped');
      return outcome;
    },
  };

  const backends: BackendLookup = {
    get: (id) => {
      const url = options.backends.get(id);
      return url === undefined ? undefined : { id, url };
    },
  };
  const services: EngineServices = {
    responseCache: {
      get: (key, caching?: CachingType) => responses.get(key, caching),
      set: (key, value, ttl, caching?: CachingType) => responses.set(key, value, ttl, caching),
    },
    // JSON values are mutable: the in-process cache keeps its own copy and hands out copies, as the external one
    // does by serializing, so one request changing what it read or stored never changes another's.
    valueCache: {
      get: async (key, caching?: CachingType) => ownCopy((await values.get(key, caching))?.value),
      set: (key, value, ttl, caching?: CachingType) =>
        values.set(key, { value: ownCopy(value) }, ttl, caching),
      delete: (key, caching?: CachingType) => values.delete(key, caching),
    },
    limits,
    events,
    eventLog: {
      async append(loggerId, message, partition) {
        if (events.send(loggerId, message, partition) === 'unknown-logger')
          throw new Error(
            `no logger "${loggerId}" in state.loggers (configured: ${Object.keys(state.loggers).join(', ') || 'none'})`,
          );
      },
    },
    concurrencyLeaseSeconds: state.concurrencyLeaseSeconds,
    ...(options.backendCertificates ? { backendCertificates: options.backendCertificates } : {}),
    backends,
    fetch: fetchWithTimeout,
    clock: { now: () => Date.now(), sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
    logger,
    trace: options.trace ?? { write: (entry) => logger.info('trace', { ...entry }) },
    counters,
    redis,
    eventStream,
    async close() {
      await eventStream?.close();
      await redis?.close();
    },
  };
  return services;
}
