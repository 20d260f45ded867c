import path from 'node:path';
import { type Logger, processLogger } from '../log.js';
import type { CachedResponse } from '../policy/index.js';
import { closeStateBackend, openStateBackend, type StateBackend, unknownBackend } from '../state/backend.js';
import { EmbeddedEventStream } from '../state/embedded-event-stream.js';
import { EmbeddedLimitStore } from '../state/embedded-limits.js';
import { EmbeddedVectorStore } from '../state/embedded-vectors.js';
import { type EventStream, type EventStreamOptions, RedisEventStream } from '../state/event-stream.js';
import { type KafkaEventStream, openKafkaStreams } from '../state/kafka-event-stream.js';
import type { LimitStore } from '../state/limits.js';
import { MemoryLimitStore } from '../state/memory-limits.js';
import {
  isInlinePem,
  kafkaLoggers,
  otlpLoggers,
  type StateConfig,
  stateConfigSchema,
  streamLoggers,
} from '../state/options.js';
import { type OtlpEventStream, openOtlpStreams } from '../state/otlp-event-stream.js';
import { RedisByteCache } from '../state/redis-cache.js';
import { RedisLimitStore } from '../state/redis-limits.js';
import { RedisVectorStore } from '../state/redis-vectors.js';
import { TieredCache } from '../state/tiered-cache.js';
import { MemoryVectorStore, type VectorStore } from '../state/vector-store.js';
import { ElementCounters } from './element-counters.js';
import { FailureLog, GuardedLimits, STATE_UNAVAILABLE } from './guarded-limits.js';
import { EngineMetrics } from './metrics.js';
import { responseCodec, valueCodec } from './value-codecs.js';

export interface EngineStateOptions {
  /** The configuration's `state` section (absent: everything in-process with the defaults). */
  readonly state?: Partial<StateConfig>;
  /** The folder `state.dataDir` is relative to: the configuration file's (default: the working directory). */
  readonly directory?: string;
  readonly logger?: Logger;
  /** Open ext_proc streams, for the metrics gauge. */
  readonly activeStreams?: () => number;
}

/**
 * What an engine process keeps across configuration generations: the caches, the limit counters (in-process,
 * embedded in `state.dataDir`, or Redis), the Redis connection, the event stream, the element counters and
 * metrics. A reload compiles new pipelines over the same state; what a changed policy must not see is kept
 * apart by the keys themselves (a cache key names the API, operation and everything the lookup varies by; a
 * counter key the element's counter-key or subscription and scope; a quota window its period and origin).
 */
export class EngineState {
  readonly config: StateConfig;
  /** Equal for two configurations that can share this state: the state section, dataDir resolved. */
  readonly signature: string;
  readonly logger: Logger;
  readonly counters = new ElementCounters();
  readonly metrics: EngineMetrics;
  readonly failures: FailureLog;
  /**
   * Where the shared part lives: Redis (responses and values cached there too, behind the in-process caches), the
   * embedded store of `state.dataDir`, or memory.
   */
  readonly backend: StateBackend;
  readonly limits: GuardedLimits;
  readonly responses: TieredCache<CachedResponse>;
  readonly values: TieredCache<{ value: unknown }>;
  /** The semantic cache's vectors: where the limit counters are (Redis, embedded, or in-process). */
  readonly vectors: VectorStore;
  /** The event stream of the loggers written to the state store (Redis Streams, embedded). */
  readonly eventStream: EventStream | undefined;
  /**
   * The event streams of the loggers written to Kafka topics, by logger id: one per connection, each with its own
   * buffer, so a cluster that is down never fills another's buffer or the state store's.
   */
  readonly kafkaStreams: ReadonlyMap<string, KafkaEventStream>;
  /** The event streams of the loggers sent to OpenTelemetry collectors as OTLP log records, by logger id. */
  readonly otlpStreams: ReadonlyMap<string, OtlpEventStream>;

  constructor(options: EngineStateOptions = {}) {
    const state = stateConfigSchema.parse(options.state ?? {});
    this.config = state;
    this.signature = stateSignature(options.state, options.directory);
    const logger = options.logger ?? processLogger;
    this.logger = logger;
    this.metrics = new EngineMetrics(this.counters, options.activeStreams);
    const failures = new FailureLog(logger);
    this.failures = failures;
    this.backend = openStateBackend(state, {
      ...(options.directory === undefined ? {} : { directory: options.directory }),
      logger,
    });
    const stores = backendStores(this.backend, state);
    const cacheFailure = (operation: string, error: unknown) => {
      this.counters.count('cache', 'failed', operation === 'encode' ? 'NotSerializable' : STATE_UNAVAILABLE);
      failures.report(`cache ${operation}`, error);
    };
    this.responses = new TieredCache<CachedResponse>({
      internal: {
        maxBytes: state.cache.internalBytes,
        maxEntryBytes: state.cache.maxEntryBytes,
        sizeOf: (value) =>
          value.body.length + value.headers.reduce((sum, [name, v]) => sum + name.length + v.length, 0),
      },
      external: stores.responses,
      codec: responseCodec,
      onFailure: cacheFailure,
    });
    this.values = new TieredCache<{ value: unknown }>({
      internal: {
        maxBytes: state.cache.internalBytes,
        maxEntryBytes: state.cache.maxEntryBytes,
        // The encoded size is what the value would take in Redis; values that cannot be encoded count as 256 bytes.
        sizeOf: (entry) =>
          typeof entry.value === 'string'
            ? entry.value.length * 2
            : (valueCodec.encode(entry)?.length ?? 256),
      },
      external: stores.values,
      codec: valueCodec,
      onFailure: cacheFailure,
    });

    this.vectors = stores.vectors;
    this.limits = new GuardedLimits(
      stores.limits,
      state.onRedisFailure,
      this.counters,
      failures,
      state.concurrencyLeaseSeconds,
    );

    const streamOptions = {
      targets: streamLoggers(state.loggers),
      bufferSize: state.eventBuffer,
      bufferBytes: state.eventBufferBytes,
      onError: (message: string) =>
        failures.report('shared state unavailable: log-to-eventhub', new Error(message)),
    };
    this.kafkaStreams = openKafkaStreams(
      kafkaLoggers(state.loggers),
      {
        bufferSize: state.eventBuffer,
        bufferBytes: state.eventBufferBytes,
        onError: (message: string) =>
          failures.report('log-to-eventhub: Kafka does not take the events', new Error(message)),
      },
      options.directory,
    );
    this.otlpStreams = openOtlpStreams(otlpLoggers(state.loggers), {
      bufferSize: state.eventBuffer,
      bufferBytes: state.eventBufferBytes,
      onError: (message: string) =>
        failures.report('log-to-eventhub: the OTLP collector does not take the events', new Error(message)),
    });
    this.eventStream = stores.eventStream(streamOptions);
  }

  /** Writes queued events, closes the Redis connection and the embedded store (after the events in it). */
  async close(): Promise<void> {
    await Promise.all([
      this.eventStream?.close(),
      ...[...new Set(this.kafkaStreams.values())].map((stream) => stream.close()),
      ...[...this.otlpStreams.values()].map((stream) => stream.close()),
    ]);
    await closeStateBackend(this.backend);
  }
}

/** What the backend keeps of the engine's state, beside what stays in-process whatever the backend. */
interface BackendStores {
  /** The shared tier of the response and value caches (Redis only: the others are one process's memory anyway). */
  readonly responses: RedisByteCache | undefined;
  readonly values: RedisByteCache | undefined;
  /** The semantic cache's vectors. */
  readonly vectors: VectorStore;
  /** The rate-limit, quota and concurrency counters. */
  readonly limits: LimitStore;
  /** The stream of the loggers written to the state store; none in memory (the configuration refuses them then). */
  eventStream(options: EventStreamOptions): EventStream | undefined;
}

function backendStores(backend: StateBackend, state: StateConfig): BackendStores {
  switch (backend.kind) {
    case 'redis': {
      const redis = backend.connection;
      return {
        responses: new RedisByteCache(redis, 'resp', state.cache.maxEntryBytes),
        values: new RedisByteCache(redis, 'val', state.cache.maxEntryBytes),
        vectors: new RedisVectorStore(redis),
        limits: new RedisLimitStore(redis),
        eventStream: (options) => new RedisEventStream(redis, options),
      };
    }
    case 'embedded': {
      const store = backend.store;
      return {
        responses: undefined,
        values: undefined,
        vectors: new EmbeddedVectorStore(store),
        limits: new EmbeddedLimitStore(store),
        eventStream: (options) => new EmbeddedEventStream(store, options),
      };
    }
    case 'memory':
      return {
        responses: undefined,
        values: undefined,
        vectors: new MemoryVectorStore({ maxBytes: state.cache.internalBytes }),
        limits: new MemoryLimitStore(),
        eventStream: () => undefined,
      };
    default:
      return unknownBackend(backend);
  }
}

/**
 * The identity of a state section: dataDir and Kafka loggers' TLS files as the absolute paths they name, everything
 * else as written (a TLS file rewritten in place is read again when the engine starts, not on reload).
 */
export function stateSignature(state: Partial<StateConfig> | undefined, directory = '.'): string {
  const parsed = stateConfigSchema.parse(state ?? {});
  const file = (source: string | undefined) =>
    source === undefined || isInlinePem(source) ? source : path.resolve(directory, source);
  const loggers = Object.fromEntries(
    Object.entries(parsed.loggers).map(([id, logger]) => {
      const tls = logger.kafka?.tls;
      if (logger.kafka === undefined || typeof tls !== 'object') return [id, logger];
      return [
        id,
        {
          ...logger,
          kafka: {
            ...logger.kafka,
            tls: { ...tls, ca: file(tls.ca), cert: file(tls.cert), key: file(tls.key) },
          },
        },
      ];
    }),
  );
  return JSON.stringify({
    ...parsed,
    dataDir: parsed.dataDir === undefined ? undefined : path.resolve(directory, parsed.dataDir),
    loggers,
  });
}

/** An engine state a generation holds until it is closed. */
export interface HeldEngineState {
  readonly state: EngineState;
  release(): Promise<void>;
}

/**
 * The engine state of a process across reloads: each generation holds the current state while it serves. A
 * configuration with the same state section gets the same state (caches and counters carry over); one whose
 * state section changed (another Redis, another data directory, other cache bounds) gets a new one, and the
 * previous state closes once the last generation holding it has closed.
 */
export class EngineStateKeeper {
  #current: { state: EngineState; holders: number } | undefined;
  readonly #retired = new Set<{ state: EngineState; holders: number }>();

  constructor(private readonly options: Omit<EngineStateOptions, 'state' | 'directory'> = {}) {}

  hold(state: Partial<StateConfig> | undefined, directory: string | undefined): HeldEngineState {
    const signature = stateSignature(state, directory);
    if (this.#current?.state.signature !== signature) {
      const previous = this.#current;
      this.#current = {
        state: new EngineState({
          ...this.options,
          ...(state === undefined ? {} : { state }),
          ...(directory === undefined ? {} : { directory }),
        }),
        holders: 0,
      };
      if (previous !== undefined) {
        previous.state.logger.info('engine state replaced: the state section changed', {});
        if (previous.holders === 0) void previous.state.close();
        else this.#retired.add(previous);
      }
    }
    const slot = this.#current!;
    slot.holders++;
    let released = false;
    return {
      state: slot.state,
      release: async () => {
        if (released) return;
        released = true;
        slot.holders--;
        if (slot.holders === 0 && this.#retired.delete(slot)) await slot.state.close();
      },
    };
  }

  /** The state serving now (undefined before the first generation). */
  get current(): EngineState | undefined {
    return this.#current?.state;
  }

  /** Closes every state; call once the last generation has stopped serving. */
  async close(): Promise<void> {
    const all = [...this.#retired, ...(this.#current ? [this.#current] : [])];
    this.#retired.clear();
    this.#current = undefined;
    await Promise.all(all.map((slot) => slot.state.close()));
  }
}
