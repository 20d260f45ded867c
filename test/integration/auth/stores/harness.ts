import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createEmbeddedStores } from '../../../../src/auth/stores/embedded.js';
import { createMemoryStores } from '../../../../src/auth/stores/memory.js';
import { createRedisStores } from '../../../../src/auth/stores/redis.js';
import { type EmbeddedState, openEmbeddedState } from '../../../../src/state/embedded.js';
import { RedisConnection, type RedisTarget } from '../../../../src/state/redis-connection.js';
import type { Backend } from '../../../suites/auth-stores.js';
import { START } from '../../../suites/auth-stores.js';

export { START };

export function memoryBackend(): Backend {
  let now = START;
  return {
    stores: createMemoryStores(() => now),
    now: () => now,
    advance: (s) => {
      now += s;
    },
  };
}

let unique = 0;

/**
 * The Redis store (one Redis or a Redis Cluster) on the same kind of fake clock: it compares each record's expiry with the injected clock
 * like the in-process store, so the same cases hold; TTLs are computed from that clock too. Every backend
 * gets its own namespace, so cases never see each other's keys; its twin is a second connection on it.
 */
export function redisBackend(target: RedisTarget, connections: RedisConnection[]): Backend {
  const connect = () => {
    const connection = new RedisConnection({
      ...target,
      keyPrefix: 'test:',
      commandTimeoutMs: 2000,
      connectTimeoutMs: 2000,
    });
    connections.push(connection);
    return connection;
  };
  let now = START;
  const namespace = `auth${process.pid}-${++unique}:`;
  const open = () => createRedisStores(connect(), { now: () => now, namespace });
  return {
    stores: open(),
    now: () => now,
    advance: (s) => {
      now += s;
    },
    twin: open,
  };
}

/** Data directories and environments the embedded backends opened, for the file's afterAll to release. */
export class EmbeddedDirectories {
  readonly #directories: string[] = [];
  readonly #states: EmbeddedState[] = [];

  /** A fresh data directory. */
  create(): string {
    const directory = mkdtempSync(path.join(tmpdir(), 'portcullis-auth-lmdb-'));
    this.#directories.push(directory);
    return directory;
  }

  open(directory: string): EmbeddedState {
    const state = openEmbeddedState(directory);
    this.#states.push(state);
    return state;
  }

  async release(): Promise<void> {
    await Promise.all(this.#states.map((state) => state.close()));
    await Promise.all(this.#directories.map((d) => rm(d, { recursive: true, force: true })));
  }
}

/** The embedded store in a fresh data directory; its twin opens the same directory again. */
export function embeddedBackend(directories: EmbeddedDirectories): Backend {
  const directory = directories.create();
  let now = START;
  const open = () => createEmbeddedStores(directories.open(directory), { now: () => now });
  return {
    stores: open(),
    now: () => now,
    advance: (s) => {
      now += s;
    },
    twin: open,
  };
}
