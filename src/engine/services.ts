import { JToken } from '../expr/index.js';
import { jsonLogger, type Logger } from '../log.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import type { BackendLookup, CachedResponse, PolicyServices, TraceSink } from '../policy/index.js';
import { RedisEventStream, type SendOutcome } from '../state/event-stream.js';
import { MemoryLimitStore } from '../state/memory-limits.js';
import { type StateConfig, stateConfigSchema } from '../state/options.js';
import { RedisByteCache } from '../state/redis-cache.js';
import { RedisConnection } from '../state/redis-connection.js';
import { RedisLimitStore } from '../state/redis-limits.js';
import { type CachingType, TieredCache } from '../state/tiered-cache.js';
import { ElementCounters } from './element-counters.js';
import { FailureLog, GuardedLimits, STATE_UNAVAILABLE } from './guarded-limits.js';
import { fetchWithTimeout } from './http-fetch.js';
import { responseCodec, valueCodec } from './value-codecs.js';

/** log-to-eventhub's sink: never waits; events for unknown loggers or beyond the buffer are counted. */
export interface EngineEventSink {
  send(loggerId: string, message: string, partition?: { id?: string; key?: string }): SendOutcome;
}

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
