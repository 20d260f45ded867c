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
 * ```
 */
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
     * log-to-eventhub loggers: logger-id → the stream its events go to: a Redis Stream with `redis`, else a stream
     * of the embedded store in `dataDir` (read it back with `portcullis events`). Needs one of the two.
     */
    loggers: z
      .record(
        z.string().min(1),
        z
          .object({
            stream: z.string().min(1),
            /** Trimmed to about this many entries (XADD MAXLEN ~; embedded: at most about a tenth more). */
            maxLength: z.number().int().min(1).default(10_000),
          })
          .strict(),
      )
      .default({}),
    /** Events waiting to be written; beyond this, new events are dropped and counted. */
    eventBuffer: z.number().int().min(1).default(10_000),
  })
  .strict()
  .superRefine((state, ctx) => {
    const loggers = Object.keys(state.loggers);
    if (loggers.length === 0 || state.redis !== undefined) return;
    if (state.dataDir === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['loggers'],
        message: `loggers keep their events in state.redis (Redis Streams) or state.dataDir (the embedded store), found neither (loggers: ${loggers.join(', ')})`,
      });
      return;
    }
    const streams = new Set(Object.values(state.loggers).map((logger) => logger.stream));
    if (streams.size > maxEmbeddedStreams)
      ctx.addIssue({
        code: 'custom',
        path: ['loggers'],
        message: `the embedded store of state.dataDir holds at most ${maxEmbeddedStreams} streams, found ${streams.size}: let loggers share streams, or configure state.redis`,
      });
  });

export type StateConfig = z.infer<typeof stateConfigSchema>;
