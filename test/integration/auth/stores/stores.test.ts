import { afterAll, beforeAll } from 'vitest';
import type { RedisConnection } from '../../../../src/state/redis-connection.js';
import { type RunningRedis, startRedis } from '../../../helpers/redis.js';
import { authStoreConformance } from '../../../support/auth-stores.js';
import { EmbeddedDirectories, embeddedBackend, memoryBackend, redisBackend } from './backends.js';

/** The shared specification of AuthStores (test/support/auth-stores.ts) against each backend. */

let redis: RunningRedis;
const connections: RedisConnection[] = [];
const directories = new EmbeddedDirectories();
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.all(connections.map((c) => c.close()));
  await redis.close();
  await directories.release();
});

authStoreConformance('memory', memoryBackend);
authStoreConformance('embedded', () => embeddedBackend(directories), true);
authStoreConformance('redis', () => redisBackend(redis, connections), true);
