import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DelegatedTokens, redisSealedRecords } from '../../../src/state/delegated-tokens.js';
import { RedisConnection } from '../../../src/state/redis-connection.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';

/** The delegated tokens in a real Redis: the service writes on one connection, an engine reads on another. */

let redis: RunningRedis;
const connections: RedisConnection[] = [];

function connect(): RedisConnection {
  const connection = new RedisConnection({
    url: redis.url,
    keyPrefix: 'portcullis:',
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  connections.push(connection);
  return connection;
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const connection of connections) await connection.close();
  await redis?.close();
});

describe('delegated tokens in Redis', () => {
  it('are read by another connection, sealed under a key that names neither user nor token, with a TTL', async () => {
    const secret = 'a-shared-secret-of-the-engine-and-service';
    const record = { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: 2_000, obtainedAt: 1_000 };
    await new DelegatedTokens(redisSealedRecords(connect()), secret).write('corp|alice', record);
    expect(await new DelegatedTokens(redisSealedRecords(connect()), secret).read('corp|alice')).toEqual(
      record,
    );
    const keys = redis.cli('--scan', '--pattern', 'portcullis:deleg:*').trim().split('\n');
    expect(keys).toHaveLength(1);
    expect(keys[0]).not.toContain('alice');
    expect(redis.cli('--raw', 'GET', keys[0]!)).not.toContain('at-1');
    expect(Number(redis.cli('PTTL', keys[0]!))).toBeGreaterThan(80 * 24 * 3600 * 1000);
  });

  it('are removed for every connection, and removing a missing record is no error', async () => {
    const secret = 'a-shared-secret-of-the-engine-and-service';
    const record = { accessToken: 'at-2', refreshToken: 'rt-2', expiresAt: 2_000, obtainedAt: 1_000 };
    const service = new DelegatedTokens(redisSealedRecords(connect()), secret);
    await service.write('corp|bob', record);
    await service.remove('corp|bob');
    expect(await new DelegatedTokens(redisSealedRecords(connect()), secret).read('corp|bob')).toBeUndefined();
    await service.remove('corp|nobody');
  });
});
