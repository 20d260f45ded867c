import type { ResolvedBackend } from '../config/backend-credentials.js';
import { JToken } from '../expr/index.js';
import type { Logger } from '../log.js';
import type { BackendCertificates } from '../policy/elements/authentication-certificate.js';
import type {
  AuthorizationContexts,
  BackendLookup,
  CertificateKeys,
  IdentityTokens,
  MetricSink,
  PolicyObserver,
  PolicyServices,
  TraceSink,
  ValueCache,
} from '../policy/index.js';
import { redisOf } from '../state/backend.js';
import type { EventStream, SendOutcome } from '../state/event-stream.js';
import { metricsLoggerOf, type StateConfig } from '../state/options.js';
import type { RedisConnection } from '../state/redis-connection.js';
import type { CachingType } from '../state/tiered-cache.js';
import {
  BackendBreakers,
  databaseTrips,
  sharedBreakerStore,
  type TripTable,
  valueCacheTrips,
} from './backend-breakers.js';
import { BackendPools } from './backend-pools.js';
import type { ElementCounters } from './element-counters.js';
import { EngineState } from './engine-state.js';
import type { GuardedLimits } from './guarded-limits.js';
import { STATE_UNAVAILABLE } from './guarded-limits.js';
import { fetchWithTimeout } from './http-fetch.js';
import { responseCodec } from './value-codecs.js';

/** log-to-eventhub's sink: never waits; events for unknown loggers or beyond the buffer are counted. */
export interface EngineEventSink {
  send(loggerId: string, message: string, partition?: { id?: string; key?: string }): SendOutcome;
}

const ownCopy = (value: unknown): unknown => (value instanceof JToken ? value.clone() : value);

export interface EngineServicesOptions {
  readonly backends: ReadonlyMap<string, string>;
  /**
   * The backend entities (pools, circuit breakers, credentials): with them, set-backend-service chooses among a
   * pool's members and skips tripped backends. Absent: `backends` alone, by id.
   */
  readonly backendEntities?: readonly ResolvedBackend[];
  /**
   * The process's engine state (caches, counters, Redis), kept across reloads by its owner, who closes it. Absent:
   * the services open their own from `state`, and close it with themselves.
   */
  readonly shared?: EngineState;
  /** The configuration's `state` section (absent: everything in-process with the defaults); without `shared`. */
  readonly state?: Partial<StateConfig>;
  /** The folder `state.dataDir` is relative to (the configuration file's); without `shared`. */
  readonly directory?: string;
  readonly logger?: Logger;
  readonly trace?: TraceSink;
  /** Told of every statement (traced requests, tests); absent: live traffic pays nothing for it. */
  readonly observer?: PolicyObserver;
  /** Client certificates the gateway presents to backends (authentication-certificate). */
  readonly backendCertificates?: BackendCertificates;
  /** The private keys of tls.certificates, for decryption keys named by certificate-id. */
  readonly certificateKeys?: CertificateKeys;
  /** The gateway's token sources (the `identities` section), for authentication-managed-identity. */
  readonly identities?: IdentityTokens;
  /** identities.entraAuthority, for validate-azure-ad-token. */
  readonly entraAuthority?: string;
  /** The credential manager (identities.credentialProviders), for get-authorization-context. */
  readonly authorizations?: AuthorizationContexts;
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
  readonly eventStream: EventStream | undefined;
  /** The backends' circuit breakers, told of every answer of a backend that has one. */
  readonly breakers: BackendBreakers;
  /** The backend entities by id (their credentials), single backends only. */
  readonly backendEntities: ReadonlyMap<string, ResolvedBackend>;
  /** Closes the engine state when the services opened it themselves (else its owner does). */
  close(): Promise<void>;
}

/**
 * The engine's policy services over the engine state (caches in-process and in Redis when configured, chosen per
 * element by caching-type; limit counters in-process, embedded or in Redis; the log-to-eventhub sink), with named
 * backends, fetch, clock, log and trace of one configuration.
 */
export function createEngineServices(options: EngineServicesOptions): EngineServices {
  const own =
    options.shared === undefined
      ? new EngineState({
          ...(options.state === undefined ? {} : { state: options.state }),
          ...(options.directory === undefined ? {} : { directory: options.directory }),
          ...(options.logger === undefined ? {} : { logger: options.logger }),
        })
      : undefined;
  const engineState = options.shared ?? own!;
  const {
    counters,
    eventStream,
    kafkaStreams,
    otlpStreams,
    responses,
    values,
    vectors,
    limits,
    logger,
    failures,
  } = engineState;
  const state = engineState.config;
  const events: EngineEventSink = {
    send(loggerId, message, partition) {
      const event = {
        loggerId,
        message,
        ...(partition?.id === undefined ? {} : { partitionId: partition.id }),
        ...(partition?.key === undefined ? {} : { partitionKey: partition.key }),
      };
      const stream = kafkaStreams.get(loggerId) ?? otlpStreams.get(loggerId) ?? eventStream;
      const outcome: SendOutcome = stream?.send(event) ?? 'unknown-logger';
      if (outcome === 'dropped') {
        counters.count('log-to-eventhub', 'failed', 'EventDropped');
        // Logged once per interval with how many were not, so a long outage does not flood the log.
        failures.report(
          'log-to-eventhub buffer full, events dropped',
          new Error(`${stream?.pending} events (${stream?.pendingBytes} bytes) wait for their sink`),
          { loggerId, dropped: stream?.dropped },
        );
      }
      return outcome;
    },
  };

  // JSON values are mutable: the in-process cache keeps its own copy and hands out copies, as the external one
  // does by serializing, so one request changing what it read or stored never changes another's.
  const valueCache: ValueCache = {
    get: async (key, caching?: CachingType) => ownCopy((await values.get(key, caching))?.value),
    set: (key, value, ttl, caching?: CachingType) => values.set(key, { value: ownCopy(value) }, ttl, caching),
    delete: (key, caching?: CachingType) => values.delete(key, caching),
  };
  const clock = {
    now: () => Date.now(),
    sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  };
  // Trips go where every engine reads them: Redis's value cache, or a database of the embedded store.
  const trips =
    engineState.backend.kind === 'embedded'
      ? databaseTrips(engineState.backend.store.unsyncedDatabase<number>('backend-trips'))
      : valueCacheTrips(valueCache);
  const { backends, breakers, backendEntities } = backendServices(options, trips, limits, clock);
  // Every custom metric goes to Prometheus (and OTLP), and as one JSON event each to state.metricsLogger when set.
  const { loggerId: metricsLoggerId, deprecation } = metricsLoggerOf(state);
  if (deprecation !== undefined) logger.warn(deprecation);
  const metrics: MetricSink = {
    emit(metric) {
      engineState.metrics.emit(metric);
      if (metricsLoggerId === undefined) return;
      const event = {
        time: new Date().toISOString(),
        namespace: metric.namespace,
        name: metric.name,
        value: metric.value,
        dimensions: Object.fromEntries(metric.dimensions),
      };
      events.send(metricsLoggerId, JSON.stringify(event));
    },
  };
  const services: EngineServices = {
    responseCache: {
      get: (key, caching?: CachingType) => responses.get(key, caching),
      set: (key, value, ttl, caching?: CachingType) => responses.set(key, value, ttl, caching),
    },
    valueCache,
    semanticCache: {
      async lookup(partition, embedding, maxDistance) {
        try {
          const match = await vectors.nearest(partition, Float32Array.from(embedding), maxDistance);
          return match && { response: responseCodec.decode(match.value), distance: match.distance };
        } catch (error) {
          counters.count('cache', 'failed', STATE_UNAVAILABLE);
          failures.report('shared state unavailable: semantic cache lookup', error);
          return undefined;
        }
      },
      async store(partition, embedding, response, ttl) {
        const bytes = responseCodec.encode(response);
        if (bytes === undefined || bytes.length > state.cache.maxEntryBytes) return;
        try {
          await vectors.add(partition, Float32Array.from(embedding), bytes, ttl);
        } catch (error) {
          counters.count('cache', 'failed', STATE_UNAVAILABLE);
          failures.report('shared state unavailable: semantic cache store', error);
        }
      },
    },
    limits,
    metrics,
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
    ...(options.certificateKeys ? { certificateKeys: options.certificateKeys } : {}),
    ...(options.identities ? { identities: options.identities } : {}),
    ...(options.entraAuthority ? { entraAuthority: options.entraAuthority } : {}),
    ...(options.authorizations ? { authorizations: options.authorizations } : {}),
    backends,
    fetch: fetchWithTimeout,
    clock,
    breakers,
    backendEntities,
    logger,
    trace: options.trace ?? { write: (entry) => logger.info('trace', { ...entry }) },
    ...(options.observer ? { observer: options.observer } : {}),
    counters,
    redis: redisOf(engineState.backend),
    eventStream,
    close: async () => {
      await own?.close();
    },
  };
  return services;
}

/**
 * set-backend-service's lookup: the backend entities' pools and circuit breakers (their trips in `trips`, their
 * failure counts in the limit counters), or the named URLs alone when there are no entities.
 */
function backendServices(
  options: EngineServicesOptions,
  trips: TripTable,
  limits: GuardedLimits,
  clock: { now(): number },
): {
  readonly backends: BackendLookup;
  readonly breakers: BackendBreakers;
  readonly backendEntities: ReadonlyMap<string, ResolvedBackend>;
} {
  const entities = options.backendEntities ?? [];
  const breakers = new BackendBreakers(
    entities.flatMap((entity) =>
      entity.circuitBreaker?.rules[0] ? [[entity.id, entity.circuitBreaker.rules[0]] as const] : [],
    ),
    sharedBreakerStore(trips, limits),
    clock,
  );
  const backends: BackendLookup = options.backendEntities
    ? new BackendPools(options.backendEntities, breakers)
    : {
        get: (id) => {
          const url = options.backends.get(id);
          return url === undefined ? undefined : { id, url };
        },
      };
  const singles = entities.filter((entity) => entity.type !== 'pool');
  return { backends, breakers, backendEntities: new Map(singles.map((entity) => [entity.id, entity])) };
}
