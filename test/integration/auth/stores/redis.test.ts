import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStores } from '../../../../src/auth/stores/redis.js';
import { StateUnavailableError } from '../../../../src/state/limits.js';
import { RedisConnection } from '../../../../src/state/redis-connection.js';
import { type RunningRedis, startRedis } from '../../../processes/redis.js';
import { storeSecretRecords } from '../../../suites/auth-stores.js';
import { START } from './harness.js';

/** What only the Redis store promises: key layout, TTLs, nothing secret in clear, shared state, failures. */

let redis: RunningRedis;
let raw: Redis;
const connections: RedisConnection[] = [];
beforeAll(async () => {
  redis = await startRedis();
  raw = new Redis(redis.url);
});
afterAll(async () => {
  raw.disconnect();
  await Promise.all(connections.map((c) => c.close()));
  await redis.close();
});

function connect(keyPrefix = 'pc:'): RedisConnection {
  const connection = new RedisConnection({
    url: redis.url,
    keyPrefix,
    commandTimeoutMs: 2000,
    connectTimeoutMs: 2000,
  });
  connections.push(connection);
  return connection;
}

describe('redis auth stores', () => {
  it('prefix every key and give each the TTL of its record', async () => {
    const stores = createRedisStores(connect('pc:'), { now: () => START, namespace: 'ttl:' });
    await stores.codes.put({
      id: 'code-digest',
      clientId: 'c1',
      redirectUri: undefined,
      codeChallenge: 'x',
      codeChallengeMethod: 'S256',
      scope: [],
      resource: 'r',
      sub: 'alice',
      authTime: START,
      grantId: 'g1',
      expiresAt: START + 60,
      consumed: false,
    });
    await stores.grants.put({
      id: 'g1',
      clientId: 'c1',
      sub: 'alice',
      scope: [],
      resource: 'r',
      createdAt: START,
      expiresAt: START + 86_400,
      revoked: false,
    });
    await stores.grants.addAccessToken('g1', 'jti-1', START + 3600);
    await stores.denylist.add('jti-2', START + 300);
    await stores.sessions.set('session-id-1', { id: 'session-id-1', expiresAt: START + 900 }, START + 900);
    await stores.counters.increment('login:alice', 120);
    await stores.clients.put({
      clientId: 'c1',
      issuedAt: START,
      secretExpiresAt: 0,
      metadata: {
        redirect_uris: ['https://a.example/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        application_type: 'web',
      },
    });

    const keys = (await raw.keys('*')).filter((k) => k.startsWith('pc:ttl:')).sort();
    expect(keys.map((k) => k.replace(/session:.*/, 'session:*'))).toEqual([
      'pc:ttl:client:c1',
      'pc:ttl:code:code-digest',
      'pc:ttl:count:login:alice',
      'pc:ttl:deny:jti-2',
      'pc:ttl:grant:{g1}',
      'pc:ttl:grant:{g1}:jti',
      'pc:ttl:session:*',
    ]);
    const ttl = async (key: string) => raw.ttl(key);
    expect(await ttl('pc:ttl:client:c1')).toBe(-1);
    expect(await ttl('pc:ttl:code:code-digest')).toBe(60);
    expect(await ttl('pc:ttl:count:login:alice')).toBe(120);
    expect(await ttl('pc:ttl:deny:jti-2')).toBe(300);
    expect(await ttl('pc:ttl:grant:{g1}')).toBe(86_400);
    expect(await ttl('pc:ttl:grant:{g1}:jti')).toBeGreaterThan(86_398);
    expect(await ttl(keys.find((k) => k.includes('session:'))!)).toBe(900);
  });

  it('keep session and interaction identifiers, CSRF tokens and users out of Redis', async () => {
    const stores = createRedisStores(connect('pc:'), { now: () => START, namespace: 'secret:' });
    const { sessionId, interaction, secrets } = await storeSecretRecords(stores, START);

    const keys = (await raw.keys('pc:secret:*')).sort();
    expect(keys).toHaveLength(3);
    const dump = Buffer.concat(
      await Promise.all(keys.map(async (k) => Buffer.concat([Buffer.from(k), (await raw.getBuffer(k))!]))),
    ).toString('latin1');
    for (const secret of secrets) expect(dump).not.toContain(secret);
    expect(await stores.interactions.get(interaction.id)).toEqual(interaction);

    // A sealed value moved under another identifier's key does not open.
    const otherId = 'OTHERsessionOTHERsession1234';
    await stores.sessions.set(otherId, { id: otherId, expiresAt: START + 600 }, START + 600);
    const sessionKeys = await raw.keys('pc:secret:session:*');
    expect(sessionKeys).toHaveLength(2);
    const values = await Promise.all(sessionKeys.map((k) => raw.getBuffer(k)));
    await raw.set(sessionKeys[0]!, values[1]!);
    await raw.set(sessionKeys[1]!, values[0]!);
    expect(await stores.sessions.get(sessionId)).toBeUndefined();
    expect(await stores.sessions.get(otherId)).toBeUndefined();
  });

  it('share one state between processes: one redemption wins across connections', async () => {
    const a = createRedisStores(connect('pc:'), { namespace: 'shared:' });
    const b = createRedisStores(connect('pc:'), { namespace: 'shared:' });
    const now = Math.floor(Date.now() / 1000);
    await a.refreshTokens.put({
      id: 'rt',
      grantId: 'g',
      clientId: 'c',
      sub: 'alice',
      scope: [],
      resource: 'r',
      issuedAt: now,
      expiresAt: now + 600,
      consumed: false,
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).refreshTokens.consume('rt')),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await b.refreshTokens.find('rt'))?.consumed).toBe(true);
  });

  it('report an unreachable Redis as StateUnavailableError', async () => {
    const connection = new RedisConnection({
      url: 'redis://127.0.0.1:1',
      keyPrefix: 'pc:',
      commandTimeoutMs: 200,
      connectTimeoutMs: 200,
    });
    connections.push(connection);
    const stores = createRedisStores(connection);
    const error = await stores.codes.find('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StateUnavailableError);
    expect((error as Error).message).toMatch(
      /^redis (unavailable .* for auth code find|auth code find failed)/,
    );
  });
});
