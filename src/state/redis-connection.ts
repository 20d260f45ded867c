import { Redis } from 'ioredis';
import { StateUnavailableError } from './limits.js';

export interface RedisConnectionOptions {
  readonly url: string;
  /** Prepended to every key (also the keys of scripts and streams), so deployments can share one Redis. */
  readonly keyPrefix: string;
  /** A command without an answer after this long fails (a slow Redis must never hold a request). */
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Status changes, for the log: `down` once per outage, `ready` when (re)connected. */
  readonly onStatus?: (status: 'ready' | 'down', detail: string) => void;
}

/**
 * One ioredis connection with the failure behaviour every state backend needs:
 *   - while Redis is known to be down (ioredis is reconnecting) a command fails at once, no queueing;
 *   - before the first connection and while connected, a command fails after `commandTimeoutMs`;
 *   - it reconnects on its own (backing off to one attempt per second), so service resumes when Redis does,
 *     and nothing it holds (socket, reconnect timer) keeps a process alive that is otherwise done.
 * Every failure surfaces as StateUnavailableError; callers decide whether that opens or closes (policy-services).
 */
export class RedisConnection {
  readonly client: Redis;
  #down = false;
  #closing = false;
  #attempts = 0;
  #reconnect: NodeJS.Timeout | undefined;

  constructor(readonly options: RedisConnectionOptions) {
    this.client = new Redis(options.url, {
      keyPrefix: options.keyPrefix,
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: options.connectTimeoutMs,
      // Commands are not retried across reconnects: the request that issued one has long moved on.
      maxRetriesPerRequest: 0,
      // Reconnecting is ours (#reconnectLater): ioredis's own timer would keep a stopping process alive while
      // Redis is down.
      retryStrategy: () => null,
      // Scripts are loaded lazily by defineCommand (EVALSHA, then EVAL on NOSCRIPT after a Redis restart).
      enableReadyCheck: true,
      // Commands issued in the same tick (concurrent requests) share one write: fewer syscalls under load.
      enableAutoPipelining: true,
    });
    // The socket alone must not keep a process alive whose servers have stopped (close() is the clean way out).
    this.client.on('connect', () => this.client.stream?.unref?.());
    this.client.on('ready', () => {
      if (this.#down) options.onStatus?.('ready', options.url);
      this.#down = false;
      this.#attempts = 0;
    });
    this.client.on('error', (error: Error) => this.#markDown(error.message));
    this.client.on('close', () => this.#markDown('connection closed'));
    this.client.on('end', () => this.#reconnectLater());
  }

  /** Tries again after a back-off (100 ms more per failed attempt, at most a second) on a timer that lets a
   * stopping process exit. */
  #reconnectLater(): void {
    if (this.#closing || this.#reconnect !== undefined) return;
    this.#attempts++;
    this.#reconnect = setTimeout(
      () => {
        this.#reconnect = undefined;
        if (this.#closing) return;
        // A failed attempt ends in 'end' again, which schedules the next one.
        this.client.connect().catch(() => {});
      },
      Math.min(this.#attempts * 100, 1000),
    ).unref();
  }

  /** False while disconnected after a failure, between reconnect attempts (commands would only fail). */
  get available(): boolean {
    const status = this.client.status;
    return status !== 'reconnecting' && status !== 'close' && status !== 'end';
  }

  /** Runs one Redis operation; any failure or timeout becomes StateUnavailableError. */
  async run<T>(what: string, operation: (client: Redis) => Promise<T>): Promise<T> {
    if (!this.available)
      throw new StateUnavailableError(`redis unavailable (${this.client.status}) for ${what}`);
    try {
      return await operation(this.client);
    } catch (error) {
      throw new StateUnavailableError(
        `redis ${what} failed: ${error instanceof Error ? error.message : String(error)}`,
        error,
      );
    }
  }

  /** Resolves once connected, or rejects after `timeoutMs` (start-up checks and tests). */
  async ready(timeoutMs: number): Promise<void> {
    if (this.client.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.client.off('ready', onReady);
        reject(new StateUnavailableError(`redis at ${this.options.url} not ready within ${timeoutMs} ms`));
      }, timeoutMs);
      const onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      this.client.once('ready', onReady);
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    if (this.#reconnect !== undefined) clearTimeout(this.#reconnect);
    this.#reconnect = undefined;
    this.client.removeAllListeners('close');
    await this.client.quit().catch(() => this.client.disconnect());
  }

  #markDown(detail: string): void {
    if (this.#down || this.#closing) return;
    this.#down = true;
    this.options.onStatus?.('down', detail);
  }
}
