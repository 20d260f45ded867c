import { type ChainableCommander, ReplyError } from 'ioredis';
import type { RedisConnection } from './redis-connection.js';

/** Where a logger's events go: a Redis Stream trimmed to about `maxLength` entries. */
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

export interface EventStreamOptions {
  readonly targets: ReadonlyMap<string, StreamTarget>;
  /** Events held while Redis is slow or down; beyond this, new events are dropped (and counted). */
  readonly bufferSize: number;
  /** Events per round trip (one pipeline of XADDs). */
  readonly batchSize?: number;
  /** Wait before retrying after Redis failed. */
  readonly retryMs?: number;
  readonly onError?: (message: string) => void;
}

export type SendOutcome = 'queued' | 'dropped' | 'unknown-logger';

/**
 * log-to-eventhub's sink: `send` never waits for Redis — it queues the event and returns, and a background flush
 * writes batches with XADD … MAXLEN ~ n. While Redis is unavailable, events wait in the bounded buffer and are
 * retried; when the buffer is full the newest are dropped and counted, so a Redis outage costs memory only up to
 * the bound and never a request's latency.
 */
export class RedisEventStream {
  readonly #queue: StreamEvent[] = [];
  #flushing: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #closed = false;
  sent = 0;
  dropped = 0;
  /** Events Redis refused one by one (wrong key type …); they are not retried. */
  rejected = 0;

  constructor(
    private readonly connection: RedisConnection,
    private readonly options: EventStreamOptions,
  ) {}

  has(loggerId: string): boolean {
    return this.options.targets.has(loggerId);
  }

  get pending(): number {
    return this.#queue.length;
  }

  send(event: StreamEvent): SendOutcome {
    if (!this.options.targets.has(event.loggerId)) return 'unknown-logger';
    if (this.#closed || this.#queue.length >= this.options.bufferSize) {
      this.dropped++;
      return 'dropped';
    }
    this.#queue.push(event);
    if (this.#flushing === undefined && this.#retryTimer === undefined)
      this.#flushing = Promise.resolve().then(() => this.#drain());
    return 'queued';
  }

  /** Resolves when everything queued so far was written, or Redis failed for this attempt. */
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

  async #drain(): Promise<void> {
    const batchSize = this.options.batchSize ?? 256;
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.slice(0, batchSize);
        const results = await this.connection.run('xadd', async (client) => {
          // One pipeline per stream: on a Redis Cluster a pipeline's keys must all be served by one node.
          const pipelines = new Map<string, ChainableCommander>();
          for (const event of batch) {
            const target = this.options.targets.get(event.loggerId)!;
            const fields = ['loggerId', event.loggerId, 'message', event.message];
            if (event.partitionId !== undefined) fields.push('partitionId', event.partitionId);
            if (event.partitionKey !== undefined) fields.push('partitionKey', event.partitionKey);
            const pipeline = pipelines.get(target.stream) ?? client.pipeline();
            pipelines.set(target.stream, pipeline);
            pipeline.xadd(target.stream, 'MAXLEN', '~', target.maxLength, '*', ...fields);
          }
          const replies = await Promise.all([...pipelines.values()].map((pipeline) => pipeline.exec()));
          return replies.flatMap((reply) => reply ?? []);
        });
        // A pipeline resolves even when the connection failed under it: only Redis's own replies count as
        // answered; anything else means the batch may not have arrived and is sent again (at least once).
        const lost = (results ?? []).find(([error]) => error && !(error instanceof ReplyError));
        if (lost !== undefined) throw lost[0];
        this.#queue.splice(0, batch.length);
        for (const [error] of results ?? []) {
          if (error) {
            this.rejected++;
            this.options.onError?.(`xadd rejected: ${error.message}`);
          } else this.sent++;
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
