import type { ChainableCommander } from 'ioredis';
import { ioredis, type RedisConnection } from './redis-connection.js';

/** Where a logger's events go: a stream (Redis Stream, or embedded) trimmed to about `maxLength` entries. */
export interface StreamTarget {
  readonly stream: string;
  readonly maxLength: number;
}

export interface StreamEvent {
  readonly loggerId: string;
  readonly message: string;
  readonly partitionId?: string;
  readonly partitionKey?: string;
}

/** An event as the stream retains it: its id (`<ms>-<seq>`, increasing within the stream) and when it was written. */
export interface RetainedEvent extends StreamEvent {
  readonly id: string;
  /** Epoch milliseconds: the `<ms>` of the id. */
  readonly time: number;
}

/** Which retained entries to read, oldest first, at most `limit`. */
export interface ReadRange {
  /** Entries after this id (all when absent); a bare `<ms>` reads from that millisecond on. */
  readonly after?: EventId;
  readonly limit: number;
}

export interface EventStreamOptions<Target = StreamTarget> {
  readonly targets: ReadonlyMap<string, Target>;
  /** Events held while the store is slow or down; beyond this, new events are dropped (and counted). */
  readonly bufferSize: number;
  /** Bytes of messages held (UTF-16 length × 2, as in memory); beyond this, new events are dropped. Absent: no bound. */
  readonly bufferBytes?: number;
  /** Events per write (one pipeline of XADDs, one LMDB transaction). */
  readonly batchSize?: number;
  /** Wait before retrying after a write failed. */
  readonly retryMs?: number;
  readonly onError?: (message: string) => void;
}

export type SendOutcome = 'queued' | 'dropped' | 'unknown-logger';

/** What one batch write did: events the store took, and the reasons of those it refused one by one. */
export interface BatchOutcome {
  readonly written: number;
  readonly refused: readonly string[];
}

/** An entry's id, `<ms>-<seq>`; `seq` absent for a bare `<ms>` given to read from. */
export interface EventId {
  readonly ms: number;
  readonly seq?: number;
}

/** `<ms>-<seq>` or a bare `<ms>`; undefined when malformed. */
export function parseEventId(id: string): EventId | undefined {
  const match = /^(\d{1,15})(?:-(\d{1,15}))?$/.exec(id);
  if (match === null) return undefined;
  return match[2] === undefined ? { ms: Number(match[1]) } : { ms: Number(match[1]), seq: Number(match[2]) };
}

/**
 * log-to-eventhub's sink: `send` never waits for the store — it queues the event and returns, and a background
 * flush writes batches (writeBatch of each backend). While the store is unavailable, events wait in the bounded
 * buffer and are retried; when the buffer is full the newest are dropped and counted, so an outage costs memory
 * only up to the bound and never a request's latency.
 */
export abstract class EventStream<Target = StreamTarget> {
  readonly #queue: StreamEvent[] = [];
  #queuedBytes = 0;
  #flushing: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  sent = 0;
  dropped = 0;
  /** Events the store refused one by one (a Redis key of the wrong type …); they are not retried. */
  rejected = 0;

  constructor(protected readonly options: EventStreamOptions<Target>) {}

  /**
   * Writes `batch` (every event's logger is a configured target). Throws when the batch may not have arrived:
   * it is then sent again (at least once).
   */
  protected abstract writeBatch(batch: readonly StreamEvent[]): Promise<BatchOutcome>;

  /** The retained entries of `loggerId`'s stream in `range`, oldest first. */
  abstract read(loggerId: string, range: ReadRange): Promise<RetainedEvent[]>;

  has(loggerId: string): boolean {
    return this.options.targets.has(loggerId);
  }

  get pending(): number {
    return this.#queue.length;
  }

  /** Bytes of the messages queued. */
  get pendingBytes(): number {
    return this.#queuedBytes;
  }

  send(event: StreamEvent): SendOutcome {
    if (!this.options.targets.has(event.loggerId)) return 'unknown-logger';
    const bytes = eventBytes(event);
    if (
      this.#closed ||
      this.#queue.length >= this.options.bufferSize ||
      this.#queuedBytes + bytes > (this.options.bufferBytes ?? Number.POSITIVE_INFINITY)
    ) {
      this.dropped++;
      return 'dropped';
    }
    this.#queue.push(event);
    this.#queuedBytes += bytes;
    if (this.#flushing === undefined && this.#retryTimer === undefined)
      this.#flushing = Promise.resolve().then(() => this.#drain());
    return 'queued';
  }

  /** Resolves when everything queued so far was written, or the store failed for this attempt. */
  async flush(): Promise<void> {
    if (this.#retryTimer !== undefined) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
    }
    this.#flushing ??= this.#drain();
    await this.#flushing;
  }

  /** Stops accepting events and tries once to write what is queued. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    if (this.#retryTimer !== undefined) clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
  }

  protected target(loggerId: string): Target {
    const target = this.options.targets.get(loggerId);
    if (target === undefined)
      throw new Error(
        `no logger "${loggerId}" in state.loggers (configured: ${[...this.options.targets.keys()].join(', ') || 'none'})`,
      );
    return target;
  }

  async #drain(): Promise<void> {
    const batchSize = this.options.batchSize ?? 256;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.slice(0, batchSize);
        const outcome = await this.writeBatch(batch);
        for (const written of this.#queue.splice(0, batch.length)) this.#queuedBytes -= eventBytes(written);
        this.sent += outcome.written;
        for (const reason of outcome.refused) {
          this.rejected++;
          this.options.onError?.(reason);
        }
      }
    } catch (error) {
      this.options.onError?.(error instanceof Error ? error.message : String(error));
      if (!this.#closed)
        this.#retryTimer = setTimeout(() => {
          this.#retryTimer = undefined;
          this.#flushing = this.#drain();
        }, this.options.retryMs ?? 500).unref();
    } finally {
      this.#flushing = undefined;
    }
  }
}

/** What an event holds in memory, about: its strings at two bytes a character. */
function eventBytes(event: StreamEvent): number {
  return (
    2 *
    (event.message.length +
      event.loggerId.length +
      (event.partitionId?.length ?? 0) +
      (event.partitionKey?.length ?? 0))
  );
}

/** Fields of an XADD entry: field, value, field, value … */
function streamFields(event: StreamEvent): string[] {
  const fields = ['loggerId', event.loggerId, 'message', event.message];
  if (event.partitionId !== undefined) fields.push('partitionId', event.partitionId);
  if (event.partitionKey !== undefined) fields.push('partitionKey', event.partitionKey);
  return fields;
}

/** Each logger's events in its Redis Stream, XADD … MAXLEN ~ n (whole radix-tree nodes trimmed). */
export class RedisEventStream extends EventStream {
  constructor(
    private readonly connection: RedisConnection,
    options: EventStreamOptions,
  ) {
    super(options);
  }

  protected async writeBatch(batch: readonly StreamEvent[]): Promise<BatchOutcome> {
    const results = await this.connection.run('xadd', async (client) => {
      // One pipeline per stream: on a Redis Cluster a pipeline's keys must all be served by one node.
      const pipelines = new Map<string, ChainableCommander>();
      for (const event of batch) {
        const target = this.target(event.loggerId);
        const pipeline = pipelines.get(target.stream) ?? client.pipeline();
        pipelines.set(target.stream, pipeline);
        pipeline.xadd(target.stream, 'MAXLEN', '~', target.maxLength, '*', ...streamFields(event));
      }
      const replies = await Promise.all([...pipelines.values()].map((pipeline) => pipeline.exec()));
      return replies.flatMap((reply) => reply ?? []);
    });
    // A pipeline resolves even when the connection failed under it: only Redis's own replies count as
    // answered; anything else means the batch may not have arrived and is sent again (at least once).
    const lost = (results ?? []).find(([error]) => error && !(error instanceof ioredis().ReplyError));
    if (lost !== undefined) throw lost[0];
    const refused = (results ?? []).flatMap(([error]) => (error ? [`xadd rejected: ${error.message}`] : []));
    return { written: (results ?? []).length - refused.length, refused };
  }

  async read(loggerId: string, range: ReadRange): Promise<RetainedEvent[]> {
    const { stream } = this.target(loggerId);
    const after = range.after;
    // `(id` excludes the id itself (Redis 6.2+); a bare ms is Redis's own shorthand for its first id.
    const start =
      after === undefined ? '-' : after.seq === undefined ? `${after.ms}` : `(${after.ms}-${after.seq}`;
    const entries = await this.connection.run('xrange', (client) =>
      client.xrange(stream, start, '+', 'COUNT', range.limit),
    );
    return entries.map(([id, fields]) => {
      const value = (name: string) => {
        const at = fields.findIndex((field, i) => i % 2 === 0 && field === name);
        return at < 0 ? undefined : fields[at + 1];
      };
      const partitionId = value('partitionId');
      const partitionKey = value('partitionKey');
      return {
        id,
        time: Number(id.split('-')[0]),
        loggerId: value('loggerId') ?? loggerId,
        message: value('message') ?? '',
        ...(partitionId === undefined ? {} : { partitionId }),
        ...(partitionKey === undefined ? {} : { partitionKey }),
      };
    });
  }
}
