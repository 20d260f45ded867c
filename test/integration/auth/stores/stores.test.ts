import { afterAll, beforeAll } from 'vitest';
import type { RedisConnection } from '../../../../src/state/redis-connection.js';
import {
  type RunningRedis,
  type RunningRedisCluster,
  startRedis,
  startRedisCluster,
} from '../../../processes/redis.js';
import { authStoreConformance } from '../../../suites/auth-stores.js';
import { EmbeddedDirectories, embeddedBackend, memoryBackend, redisBackend } from './harness.js';

/** The shared specification of AuthStores (test/suites/auth-stores.ts) against each backend. */

let redis: RunningRedis;
let cluster: RunningRedisCluster;
const connections: RedisConnection[] = [];
const directories = new EmbeddedDirectories();
beforeAll(async () => {
  redis = await startRedis();
  cluster = await startRedisCluster();
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await redis.close();
  await cluster.close();
  await directories.release();
});

authStoreConformance('memory', memoryBackend);
authStoreConformance('embedded', () => embeddedBackend(directories), true);
authStoreConformance('redis', () => redisBackend({ url: redis.url }, connections), true);
// Three primaries: a grant and its token list share a slot through their hash tag, or its scripts fail (CROSSSLOT).
authStoreConformance('redis cluster', () => redisBackend({ cluster: cluster.urls }, connections), true);
