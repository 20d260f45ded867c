import type * as IORedis from 'ioredis';
import type { Cluster, Redis } from 'ioredis';
import { lazyPackage } from './lazy-package.js';
import { StateUnavailableError } from './limits.js';

/** One Redis, or the nodes of a Redis Cluster: every command, pipeline and script has the same API on both. */
/** ioredis, loaded with the first connection (lazy-package.ts). */
export const ioredis = lazyPackage<typeof IORedis>('ioredis');

export type RedisClient = Redis | Cluster;

/** Lua scripts by the command name they get: how many of their arguments are keys (prefixed, and routed in a Cluster). */
export type RedisScripts = Readonly<Record<string, { readonly numberOfKeys: number; readonly lua: string }>>;

/**
 * `client` with `scripts` as commands of its own, defined once per client (ioredis loads each lazily: EVALSHA, then
 * EVAL after a Redis restart lost it); `T` is the client's type with those commands.
 */
export function withScripts<T extends RedisClient>(client: RedisClient, scripts: RedisScripts): T {
  const [first] = Object.keys(scripts);
  if (first !== undefined && typeof (client as unknown as Record<string, unknown>)[first] !== 'function')
    for (const [name, script] of Object.entries(scripts)) client.defineCommand(name, script);
  return client as T;
}

/** Where to connect: one Redis (`url`), or a Redis Cluster found from any of its nodes (`cluster`). */
export type RedisTarget = { readonly url: string } | { readonly cluster: readonly string[] };

interface ConnectionSettings {
  /** Prepended to every key (also the keys of scripts and streams), so deployments can share one Redis. */
  readonly keyPrefix: string;
  /** A command without an answer after this long fails (a slow Redis must never hold a request). */
  readonly commandTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Status changes, for the log: `down` once per outage, `ready` when (re)connected. */
  readonly onStatus?: (status: 'ready' | 'down', detail: string) => void;
}

export type RedisConnectionOptions = ConnectionSettings & RedisTarget;

/** The target of `state.redis` (its schema admits exactly one of url and cluster). */
export function redisTarget(config: { url?: string; cluster?: string[] }): RedisTarget {
  if (config.cluster !== undefined) return { cluster: config.cluster };
  if (config.url !== undefined) return { url: config.url };
  throw new TypeError('state.redis has neither url nor cluster');
}

/**
 * What every node of a cluster is connected with: ioredis applies a seed URL's credentials and TLS to that seed
 * only, and the nodes it discovers (CLUSTER SLOTS gives host and port alone) need them as well.
 */
function clusterCredentials(nodes: readonly string[]): {
  username?: string;
  password?: string;
  tls?: object;
} {
  const urls = nodes.map((node) => new URL(node));
  const first = urls[0]!;
  for (const url of urls) {
    if (url.protocol !== first.protocol)
      throw new TypeError(`state.redis.cluster mixes ${first.protocol}// and ${url.protocol}// nodes`);
    if (url.pathname.length > 1 && url.pathname !== '/0')
      throw new TypeError(
        `state.redis.cluster: a Redis Cluster has database 0 only, got ${url.pathname.slice(1)}`,
      );
  }
  return {
    ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
    ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** The target for messages and logs: the URL, or the cluster's seed nodes. */
export function describeTarget(target: RedisTarget): string {
  // The nodes' addresses only: a cluster's seed URLs may carry its password.
  return 'url' in target
    ? target.url
    : `cluster ${target.cluster.map((node) => new URL(node).host).join(',')}`;
}

/** What every connection to a Redis server gets, alone or as a node of a cluster. */
function perNode(options: ConnectionSettings) {
  return {
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs,
    // Commands are not retried across reconnects: the request that issued one has long moved on.
    maxRetriesPerRequest: 0,
  };
}

function connectOne(options: ConnectionSettings & { readonly url: string }): Redis {
  const client = new (ioredis().Redis)(options.url, {
    ...perNode(options),
    keyPrefix: options.keyPrefix,
    // Reconnecting is RedisConnection's (#reconnectLater): ioredis's own timer would keep a stopping process
    // alive while Redis is down.
    retryStrategy: () => null,
    // Scripts are loaded lazily by defineCommand (EVALSHA, then EVAL on NOSCRIPT after a Redis restart).
    enableReadyCheck: true,
    // Commands issued in the same tick (concurrent requests) share one write: fewer syscalls under load.
    enableAutoPipelining: true,
  });
  // The socket alone must not keep a process alive whose servers have stopped (close() is the clean way out).
  client.on('connect', () => client.stream?.unref?.());
  return client;
}

function connectCluster(options: ConnectionSettings & { readonly cluster: readonly string[] }): Cluster {
  if (options.cluster.length === 0) throw new TypeError('a Redis Cluster needs at least one node URL');
  const cluster = new (ioredis().Cluster)([...options.cluster], {
    // The prefix goes before any hash tag, so `{…}` in keys still picks the slot (a prefix with braces of its
    // own would put every key in one slot: correct, but one node would do all the work).
    keyPrefix: options.keyPrefix,
    redisOptions: {
      ...perNode(options),
      ...clusterCredentials(options.cluster),
      // Each discovery attempt on an unreachable node leaves a timer this long (ioredis waits for a socket that
      // never opened to close): the default 2 s, renewed every attempt, would keep a process alive.
      disconnectTimeout: options.commandTimeoutMs,
    },
    // As for one Redis: the whole cluster lost is reconnected by RedisConnection; a node lost alone is found
    // again through the MOVED replies of the nodes that remain (ioredis refreshes its slot map on its own).
    clusterRetryStrategy: () => null,
    enableReadyCheck: true,
    enableAutoPipelining: true,
    slotsRefreshTimeout: options.connectTimeoutMs,
  });
  cluster.on('+node', (node: Redis) => node.on('connect', () => node.stream?.unref?.()));
  return cluster;
}

/**
 * One ioredis connection (to one Redis, or to every node of a Redis Cluster) with the failure behaviour every
 * state backend needs:
 *   - while Redis is known to be down (ioredis is reconnecting) a command fails at once, no queueing;
 *   - before the first connection and while connected, a command fails after `commandTimeoutMs`;
 *   - it reconnects on its own (backing off to one attempt per second), so service resumes when Redis does,
 *     and nothing it holds (socket, reconnect timer) keeps a process alive that is otherwise done.
 * Every failure surfaces as StateUnavailableError; callers decide whether that opens or closes (policy-services).
 *
 * On a cluster, ioredis stays `ready` while nodes come and go (it only knows the cluster is gone once every node
 * it connected to is), so a lost node's slots fail after `commandTimeoutMs` rather than at once, and come back
 * by themselves when the node does. Every script's and MULTI's keys must hash to one slot: the stores put the
 * part that must be shared in braces (`grant:{id}` and `grant:{id}:jti`), and every other script or transaction
 * touches a single key.
 */
export class RedisConnection {
  readonly client: RedisClient;
  /** Where it connects, for messages: the URL or the cluster's seed nodes. */
  readonly target: string;
  #down = false;
  #closing = false;
  #attempts = 0;
  #reconnect: NodeJS.Timeout | undefined;

  constructor(readonly options: RedisConnectionOptions) {
    this.target = describeTarget(options);
    this.client = 'url' in options ? connectOne(options) : connectCluster(options);
    this.client.on('ready', () => {
      if (this.#down) options.onStatus?.('ready', this.target);
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
  async run<T>(what: string, operation: (client: RedisClient) => Promise<T>): Promise<T> {
    if (!this.available)
      throw new StateUnavailableError(`redis unavailable (${this.client.status}) for ${what}`);
    try {
      return await this.#withinDeadline(operation(this.client));
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
        reject(new StateUnavailableError(`redis at ${this.target} not ready within ${timeoutMs} ms`));
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

  /**
   * A cluster queues commands while it (re)discovers its slots and retries them through MOVED, ASK and
   * CLUSTERDOWN replies, none of which the per-node commandTimeout bounds: the deadline does. One Redis needs
   * none (its commandTimeout covers every command, and nothing waits in a queue).
   */
  #withinDeadline<T>(pending: Promise<T>): Promise<T> {
    if (!(this.client instanceof ioredis().Cluster)) return pending;
    const limit = this.options.commandTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${limit} ms`)), limit).unref();
    });
    return Promise.race([pending, expired]).finally(() => clearTimeout(timer));
  }

  #markDown(detail: string): void {
    if (this.#down || this.#closing) return;
    this.#down = true;
    this.options.onStatus?.('down', detail);
  }
}
