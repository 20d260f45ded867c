import { z } from 'zod';

const failMode = z.enum(['open', 'closed']);

/**
 * Streams of loggers the embedded store holds at most: each is a named LMDB database, and an environment opens a
 * fixed number of them (the auth records and counters take the others).
 */
export const maxEmbeddedStreams = 64;

/**
 * The `state` section: where caches, rate-limit and quota counters and event streams live. Without `redis`
 * everything is in-process (one engine process), or in the embedded store of `dataDir`; with it, every engine
 * process shares one Redis.
 *
 * ```yaml
 * state:
 *   dataDir: .portcullis/state
 *   redis: { url: redis://127.0.0.1:6379, keyPrefix: "portcullis:", commandTimeoutMs: 100 }
 *   # or a Redis Cluster: redis: { cluster: [redis://10.0.0.1:6379, redis://10.0.0.2:6379] }
 *   onRedisFailure: { rateLimit: open, quota: open, concurrency: open }
 *   cache: { internalBytes: 67108864, maxEntryBytes: 1048576 }
 *   loggers:
 *     audit: { stream: apim-audit, maxLength: 10000 }
 *     hub: { kafka: { brokers: [ns.servicebus.windows.net:9093], topic: apim, tls: true,
 *                     sasl: { mechanism: plain, username: $ConnectionString, passwordEnv: EVENTHUB_CONNECTION } } }
 *     own: { kafka: { brokers: [kafka-1.internal:9093], topic: apim, tls: { ca: certs/kafka-ca.pem },
 *                     sasl: { mechanism: scram-sha-512, username: gateway, passwordEnv: KAFKA_PASSWORD } } }
 *     otel: { otlp: { endpoint: http://collector:4318, headers: { x-api-key: { env: COLLECTOR_KEY } } } }
 * ```
 */
/** A PEM written in the file (it starts with "-----BEGIN"), or the path of a PEM file relative to the configuration file. */
const pemSourceSchema = z.string().min(1);

/** Whether a PEM source is the PEM itself rather than a file's path. */
export function isInlinePem(source: string): boolean {
  return source.trimStart().startsWith('-----BEGIN');
}

/**
 * TLS to the brokers beyond the system's CAs: a private CA (a cluster of one's own), a client certificate (brokers
 * with `ssl.client.auth=required`), the name the broker's certificate must carry when it differs from the host
 * dialled. Verification stays on: there is no key to turn it off.
 */
const kafkaTlsSchema = z
  .object({
    /** The CAs that sign the brokers' certificates, instead of the system's. */
    ca: pemSourceSchema.optional(),
    /** A client certificate (its chain) and its key, for brokers that ask for one. */
    cert: pemSourceSchema.optional(),
    key: pemSourceSchema.optional(),
    /** The name the broker's certificate is checked against (and sent as SNI), instead of the broker's host. */
    servername: z.string().min(1).optional(),
  })
  .strict()
  .refine((tls) => (tls.cert === undefined) === (tls.key === undefined), {
    message: 'a client certificate needs both cert and key',
  });

/**
 * A logger whose events go to a Kafka topic. Azure Event Hubs' Kafka endpoint: brokers
 * [`<namespace>.servicebus.windows.net:9093`], tls: true, sasl { mechanism: plain, username: $ConnectionString,
 * passwordEnv: the variable holding the namespace's connection string }. A cluster of one's own with a private CA:
 * tls { ca: kafka-ca.pem }, and sasl as its listener asks (plain, scram-sha-256, scram-sha-512).
 */
export const kafkaTargetSchema = z
  .object({
    /** host:port of some brokers; any one that answers gives the cluster. */
    brokers: z.array(z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'a broker is host:port')).min(1),
    topic: z.string().regex(/^[A-Za-z0-9._-]{1,249}$/, 'a Kafka topic name is 1 to 249 of A-Z a-z 0-9 . _ -'),
    clientId: z.string().min(1).default('portcullis'),
    /**
     * TLS to the brokers (Event Hubs needs it). true: verified against the system's CAs; an object: see
     * kafkaTlsSchema (a private CA, a client certificate).
     */
    tls: z.union([z.boolean(), kafkaTlsSchema]).default(false),
    sasl: z
      .object({
        mechanism: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']),
        username: z.string().min(1),
        /** The password as written; prefer passwordEnv, so the secret is not in the file. */
        password: z.string().min(1).optional(),
        /** The environment variable holding the password, read when the engine starts. */
        passwordEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
          .optional(),
      })
      .strict()
      .refine((sasl) => (sasl.password === undefined) !== (sasl.passwordEnv === undefined), {
        message: 'sasl needs exactly one of password or passwordEnv',
      })
      .optional(),
    /** A send without an answer after this long fails and is retried (the events stay buffered). */
    requestTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
  })
  .strict();

export type KafkaTarget = z.infer<typeof kafkaTargetSchema>;

/** A header value, or the environment variable that holds it (a collector's API key is a credential). */
const headerValueSchema = z.union([
  z.string(),
  z
    .object({
      env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
        message: 'must be an environment variable name (letters, digits, "_")',
      }),
    })
    .strict(),
]);

/**
 * A collector's OTLP/HTTP base (`http://collector:4318`), the signal's path added by the sender: the one form of
 * `telemetry.otlp.endpoint` and of an OTLP logger's. `signal` ends the message when it says where a signal goes.
 */
export function otlpEndpointSchema(signal = '') {
  return z
    .string()
    .url()
    .refine((value) => /^https?:\/\/[^/]+\/?$/.test(value), {
      message: `must be an http:// or https:// URL without a path (the collector's OTLP/HTTP base, e.g. "http://collector:4318")${signal}`,
    });
}

/** The headers sent to a collector, each a value or `{ env }`. */
export const otlpHeadersSchema = z
  .record(
    z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, { message: 'must be an HTTP header name' }),
    headerValueSchema,
  )
  .default({});

/**
 * A logger whose events go to an OpenTelemetry collector as OTLP log records (OTLP/HTTP, JSON): each event's
 * message is a record's body, its logger id and partition its attributes, the request's span (when the engine
 * traces) its trace context.
 */
export const otlpLogsTargetSchema = z
  .object({
    /** The collector's OTLP/HTTP base (as telemetry.otlp.endpoint): records go to `<endpoint>/v1/logs`. */
    endpoint: otlpEndpointSchema('; records go to <endpoint>/v1/logs'),
    headers: otlpHeadersSchema,
    /** `service.name` of the records' resource. */
    serviceName: z.string().min(1).default('portcullis-engine'),
    /** An export without an answer after this long fails and is retried (the events stay buffered). */
    timeoutMs: z.number().int().min(100).max(120_000).default(10_000),
  })
  .strict();

export type OtlpLogsTarget = z.infer<typeof otlpLogsTargetSchema>;

/**
 * A logger: `{ stream, maxLength }` — a stream of the state store (Redis Streams, or the embedded store) —,
 * `{ kafka: { … } }` or `{ otlp: { … } }`. One object with every form's keys rather than a union, so a mistake inside
 * `kafka` or `otlp` is reported at its own key.
 */
const loggerSchema = z
  .object({
    stream: z.string().min(1).optional(),
    /** Trimmed to about this many entries (XADD MAXLEN ~; embedded: at most about a tenth more). */
    maxLength: z.number().int().min(1).optional(),
    kafka: kafkaTargetSchema.optional(),
    otlp: otlpLogsTargetSchema.optional(),
  })
  .strict()
  .superRefine((logger, ctx) => {
    const forms = (['stream', 'kafka', 'otlp'] as const).filter((form) => logger[form] !== undefined);
    if (forms.length !== 1)
      ctx.addIssue({
        code: 'custom',
        message: `a logger is { stream, maxLength } (a stream of the state store), { kafka: { brokers, topic } } or { otlp: { endpoint } }, found ${forms.length === 0 ? 'none of them' : forms.join(' and ')}`,
      });
    else if (logger.stream === undefined && logger.maxLength !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['maxLength'],
        message: `maxLength trims a state-store stream; ${logger.kafka ? 'a Kafka topic keeps what its retention says' : 'a collector keeps what its pipeline says'}`,
      });
  });

export type LoggerConfig = z.infer<typeof loggerSchema>;

/** Stream loggers retain this many entries when maxLength is not given. */
const defaultMaxLength = 10_000;

/** The loggers whose events go to the state store's streams (not to Kafka). */
export function streamLoggers(
  loggers: Readonly<Record<string, LoggerConfig>>,
): Map<string, { stream: string; maxLength: number }> {
  return new Map(
    Object.entries(loggers).flatMap(([id, logger]) =>
      logger.stream === undefined
        ? []
        : [[id, { stream: logger.stream, maxLength: logger.maxLength ?? defaultMaxLength }] as const],
    ),
  );
}

/** The loggers whose events go to Kafka topics. */
export function kafkaLoggers(loggers: Readonly<Record<string, LoggerConfig>>): Map<string, KafkaTarget> {
  return new Map(
    Object.entries(loggers).flatMap(([id, logger]) =>
      logger.kafka === undefined ? [] : [[id, logger.kafka] as const],
    ),
  );
}

/** The loggers whose events go to an OpenTelemetry collector. */
export function otlpLoggers(loggers: Readonly<Record<string, LoggerConfig>>): Map<string, OtlpLogsTarget> {
  return new Map(
    Object.entries(loggers).flatMap(([id, logger]) =>
      logger.otlp === undefined ? [] : [[id, logger.otlp] as const],
    ),
  );
}

export const stateConfigSchema = z
  .object({
    /**
     * The folder of the embedded durable store (LMDB), relative to the configuration file: what must outlive a
     * restart on a single machine without Redis. Absent (and no `redis`): state is in-process and lost on restart.
     */
    dataDir: z.string().min(1).optional(),
    redis: z
      .object({
        /** One Redis. */
        url: z.string().url().optional(),
        /**
         * A Redis Cluster instead: the URLs of some of its primaries (any one that answers gives the whole slot
         * map). Keys that a script or transaction uses together share a hash tag, so they live in one slot.
         */
        cluster: z.array(z.string().url()).min(1).optional(),
        /** Prepended to every key, so several deployments can share one Redis. */
        keyPrefix: z.string().default('portcullis:'),
        /** A command without an answer after this long fails; the policy's failure mode decides. */
        commandTimeoutMs: z.number().int().min(1).max(60_000).default(100),
        connectTimeoutMs: z.number().int().min(1).max(60_000).default(1000),
      })
      .strict()
      .refine((redis) => (redis.url === undefined) !== (redis.cluster === undefined), {
        message:
          'state.redis needs exactly one of url (one Redis) or cluster (the node URLs of a Redis Cluster)',
      })
      .optional(),
    /**
     * What a policy does while Redis is down or slower than commandTimeoutMs: `open` lets the request through
     * (logged and counted), `closed` refuses it with 503. Caches always fail open (a miss); log-to-eventhub
     * buffers and then drops (counted).
     */
    onRedisFailure: z
      .object({
        rateLimit: failMode.default('open'),
        quota: failMode.default('open'),
        concurrency: failMode.default('open'),
      })
      .strict()
      .default({ rateLimit: 'open', quota: 'open', concurrency: 'open' }),
    cache: z
      .object({
        /** Bound of each in-process cache (responses, values), in bytes. */
        internalBytes: z
          .number()
          .int()
          .min(1024)
          .default(64 * 1024 * 1024),
        /** Larger entries are not stored (in either cache). */
        maxEntryBytes: z
          .number()
          .int()
          .min(1)
          .default(4 * 1024 * 1024),
      })
      .strict()
      .default({ internalBytes: 64 * 1024 * 1024, maxEntryBytes: 4 * 1024 * 1024 }),
    /** Seconds a limit-concurrency slot is held at most when its request never reports back (a crashed engine). */
    concurrencyLeaseSeconds: z.number().int().min(1).default(330),
    /**
     * log-to-eventhub loggers: logger-id → where its events go. `{ stream, maxLength }`: a Redis Stream with
     * `redis`, else a stream of the embedded store in `dataDir` (read it back with `portcullis events`; needs one
     * of the two). `{ kafka: { brokers, topic, … } }`: a Kafka topic (Azure Event Hubs' Kafka endpoint too).
     * `{ otlp: { endpoint, headers } }`: OTLP log records to an OpenTelemetry collector.
     */
    loggers: z.record(z.string().min(1), loggerSchema).default({}),
    /**
     * The logger (an id of `loggers`) that also receives every custom metric — emit-metric, llm-emit-token-metric —
     * as one JSON event each, besides Prometheus and OTLP: what API Management sends to Application Insights.
     */
    metricsLogger: z.string().min(1).optional(),
    /** Events waiting to be written; beyond this, new events are dropped and counted. */
    eventBuffer: z.number().int().min(1).default(10_000),
    /** Bytes of messages waiting to be written (each sink); beyond this, new events are dropped and counted. */
    eventBufferBytes: z
      .number()
      .int()
      .min(1024)
      .default(64 * 1024 * 1024),
  })
  .strict()
  .superRefine((state, ctx) => {
    if (state.metricsLogger !== undefined && !Object.hasOwn(state.loggers, state.metricsLogger))
      ctx.addIssue({
        code: 'custom',
        path: ['metricsLogger'],
        message: `names no logger of state.loggers (configured: ${Object.keys(state.loggers).join(', ') || 'none'}), got "${state.metricsLogger}"`,
      });
    const loggers = [...streamLoggers(state.loggers).keys()];
    const backend = stateBackendKind(state);
    if (loggers.length === 0 || backend === 'redis') return;
    if (backend === 'memory') {
      ctx.addIssue({
        code: 'custom',
        path: ['loggers'],
        message: `loggers keep their events in state.redis (Redis Streams) or state.dataDir (the embedded store), found neither (loggers: ${loggers.join(', ')})`,
      });
      return;
    }
    const streams = new Set([...streamLoggers(state.loggers).values()].map((logger) => logger.stream));
    if (streams.size > maxEmbeddedStreams)
      ctx.addIssue({
        code: 'custom',
        path: ['loggers'],
        message: `the embedded store of state.dataDir holds at most ${maxEmbeddedStreams} streams, found ${streams.size}: let loggers share streams, or configure state.redis`,
      });
  });

export type StateConfig = z.infer<typeof stateConfigSchema>;

/** The backends of shared state (state/backend.ts opens them; see StateBackend there for what each means). */
export type StateBackendKind = 'redis' | 'embedded' | 'memory';

/**
 * Which backend a `state` section selects: Redis when configured, else the embedded store of dataDir, else memory.
 * Here, beside the schema, so the configuration's checks use the rule without loading the backends themselves.
 */
export function stateBackendKind(state: {
  readonly redis?: unknown;
  readonly dataDir?: string | undefined;
}): StateBackendKind {
  if (state.redis !== undefined) return 'redis';
  if (state.dataDir !== undefined) return 'embedded';
  return 'memory';
}

/** The logger id that received custom metrics by its name alone, before `state.metricsLogger`. */
const legacyMetricsLogger = 'metrics';

/**
 * Which logger receives the custom metrics: `metricsLogger`, or — for files written before it existed — a logger
 * named `metrics`, with the notice to give its owner (the name alone will stop meaning anything).
 */
export function metricsLoggerOf(state: Pick<StateConfig, 'loggers' | 'metricsLogger'>): {
  readonly loggerId: string | undefined;
  readonly deprecation?: string;
} {
  if (state.metricsLogger !== undefined) return { loggerId: state.metricsLogger };
  if (!Object.hasOwn(state.loggers, legacyMetricsLogger)) return { loggerId: undefined };
  return {
    loggerId: legacyMetricsLogger,
    deprecation: `state.loggers.${legacyMetricsLogger} receives the custom metrics because of its name, which is deprecated: add "metricsLogger: ${legacyMetricsLogger}" to the state section (a later version will no longer go by the name)`,
  };
}
