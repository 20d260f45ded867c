import path from 'node:path';
import type { Logger } from '../log.js';
import { type EmbeddedState, openEmbeddedState } from './embedded.js';
import { type StateConfig, stateBackendKind } from './options.js';
import { describeTarget, RedisConnection, redisTarget } from './redis-connection.js';

/**
 * Where a process keeps the state it shares, the one decision every store follows (the engine's caches, counters,
 * vectors and event streams; the service's OAuth records and MCP sessions; the delegated upstream tokens):
 *   - `redis`: `state.redis`, shared by every machine (with it, `state.dataDir` is not opened);
 *   - `embedded`: the LMDB store of `state.dataDir`, shared by the processes of one machine, kept across restarts;
 *   - `memory`: neither, so each process keeps its own, lost when it stops.
 * Code that builds a store switches on `kind`, exhaustively (`default: return unknownBackend(backend)`), so a new
 * backend is a compile error at every place that must learn it.
 */
export type StateBackend =
  | { readonly kind: 'redis'; readonly connection: RedisConnection }
  | { readonly kind: 'embedded'; readonly store: EmbeddedState }
  | { readonly kind: 'memory' };

/** The part of the `state` section that chooses and configures the backend. */
export type BackendConfig = Pick<StateConfig, 'redis' | 'dataDir'>;

export interface OpenStateBackendOptions {
  /** The folder `state.dataDir` is relative to: the configuration file's (default: the working directory). */
  readonly directory?: string;
  /** Told when the Redis connection is lost and when it is back. */
  readonly logger: Logger;
}

/**
 * Opens the backend a `state` section selects (stateBackendKind): the one Redis connection or embedded store of the
 * process, which every store of the process then shares; closeStateBackend closes it.
 */
export function openStateBackend(state: BackendConfig, options: OpenStateBackendOptions): StateBackend {
  const kind = stateBackendKind(state);
  switch (kind) {
    case 'redis':
      // Redis holds the state of every machine: state.dataDir, if set too, is not opened.
      return { kind, connection: connectRedis(state.redis!, options.logger) };
    case 'embedded':
      return { kind, store: openEmbeddedState(path.resolve(options.directory ?? '.', state.dataDir!)) };
    case 'memory':
      return { kind };
    default:
      return unknownBackend(kind);
  }
}

/** Closes the backend's connection or store (the stores over it have written what they hold first). */
export async function closeStateBackend(backend: StateBackend): Promise<void> {
  switch (backend.kind) {
    case 'redis':
      return backend.connection.close();
    case 'embedded':
      return backend.store.close();
    case 'memory':
      return;
    default:
      return unknownBackend(backend);
  }
}

/** The Redis connection of a backend, when it is Redis (health checks, start-up waits). */
export function redisOf(backend: StateBackend): RedisConnection | undefined {
  return backend.kind === 'redis' ? backend.connection : undefined;
}

/** The `default` of a switch over a backend's kind: a compile error while a kind lacks its case. */
export function unknownBackend(backend: never): never {
  const kind: unknown =
    typeof backend === 'object' && backend !== null ? (backend as { kind?: unknown }).kind : backend;
  throw new TypeError(`unknown state backend, got kind ${JSON.stringify(kind)}`);
}

/** The connection of `state.redis`, its losses and recoveries logged. */
function connectRedis(config: NonNullable<BackendConfig['redis']>, logger: Logger): RedisConnection {
  const target = redisTarget(config);
  return new RedisConnection({
    ...target,
    keyPrefix: config.keyPrefix,
    commandTimeoutMs: config.commandTimeoutMs,
    connectTimeoutMs: config.connectTimeoutMs,
    onStatus: (status, detail) =>
      status === 'ready'
        ? logger.info('redis reconnected', { url: detail })
        : logger.warn('redis connection lost', { url: describeTarget(target), detail }),
  });
}
