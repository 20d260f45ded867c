import { createMemoryStores } from '../../../../src/auth/stores/memory.js';
import { createRedisStores } from '../../../../src/auth/stores/redis.js';
import type { AuthStores } from '../../../../src/auth/stores/types.js';
import { RedisConnection } from '../../../../src/state/redis-connection.js';
import type { RunningRedis } from '../../../helpers/redis.js';

/** A store set on a fake clock (epoch seconds) that a case moves forward. */
export interface Backend {
  stores: AuthStores;
  now(): number;
  advance(seconds: number): void;
}

export const START = 1_800_000_000;

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
 * The Redis store on the same kind of fake clock: it compares each record's expiry with the injected clock
 * like the in-process store, so the same cases hold; TTLs are computed from that clock too. Every backend
 * gets its own namespace, so cases never see each other's keys.
 */
export function redisBackend(redis: RunningRedis, connections: RedisConnection[]): Backend {
  const connection = new RedisConnection({
    url: redis.url,
    keyPrefix: 'test:',
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  connections.push(connection);
  let now = START;
  const stores = createRedisStores(connection, {
    now: () => now,
    namespace: `auth${process.pid}-${++unique}:`,
  });
  return {
    stores,
    now: () => now,
    advance: (s) => {
      now += s;
    },
  };
}
