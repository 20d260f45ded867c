import type { ChainableCommander } from 'ioredis';
import {
  type RedisClient,
  type RedisConnection,
  type RedisScripts,
  withScripts,
} from '../../state/redis-connection.js';
import { digest } from '../crypto.js';
import { deepFreeze, type SealedKind, seal, unseal } from './records.js';
import type {
  AccessTokenDenylist,
  AuthorizationCodeRecord,
  AuthStores,
  ClientRecord,
  ClientStore,
  ConsentRecord,
  CounterStore,
  ExpiringStore,
  GrantRecord,
  GrantStore,
  InteractionRecord,
  OneTimeStore,
  RefreshTokenRecord,
  SessionRecord,
} from './types.js';

type Clock = () => number;

export interface RedisStoreOptions {
  /** Epoch seconds; the same clock the authorization server runs on (tests move it). */
  now?: Clock;
  /** Put after the connection's own keyPrefix, so the AS's keys stay apart from caches and counters. Default `auth:`. */
  namespace?: string;
}

/*
 * Every store operation is one Redis command, one MULTI or one Lua script, so several authorization-server
 * processes sharing one Redis see one state: a code or refresh token is consumed by exactly one of them, and
 * a grant revoked at one stops issuance at all of them.
 *
 * Expiry: each key gets a TTL of (expiresAt − now), so Redis frees what expired; reads also compare the
 * record's expiresAt with the server's clock (the in-process store does the same), so behaviour does not
 * depend on which clock expires first and tests that move the clock see both stores alike.
 *
 * Secrets: codes, refresh tokens, client secrets and registration tokens arrive as digests already. Session
 * and interaction identifiers are cookies and URL parameters, and their records name the session and the
 * CSRF token; those stores key by digest(identifier) and seal the record with AES-256-GCM under a key derived
 * from the identifier itself, so Redis (or a dump of it) holds nothing that lets anyone act as a user.
 *
 * Layout (under keyPrefix + namespace):
 *   client:<client_id>                 JSON ClientRecord, no TTL (a registration lives until deleted)
 *   code:<digest> / refresh:<digest>   hash r=JSON record, e=expiresAt, c=1 once consumed
 *   grant:{<id>}                       hash r=JSON record, e=expiresAt, v=1 once revoked
 *   grant:{<id>}:jti                   sorted set of access-token jti scored by exp (same slot: hash tag)
 *   deny:<jti>                         exp of the revoked access token
 *   session:|interaction:|consent:<digest>   sealed {e, v}
 *   count:<key>                        hash c=count, r=resetAt
 */

/** KEYS[1] one-time hash. ARGV now. 1 for the single caller that flips `c`, 0 when unknown, expired or used. */
const CONSUME = `
local f = redis.call('HMGET', KEYS[1], 'e', 'c')
if not f[1] or tonumber(f[1]) <= tonumber(ARGV[1]) or f[2] == '1' then return 0 end
redis.call('HSET', KEYS[1], 'c', '1')
return 1
`;

/** KEYS[1] grant hash, KEYS[2] its jti set. ARGV now, jti, exp. 0 when the grant is gone, expired or revoked. */
const ADD_ACCESS_TOKEN = `
local now = tonumber(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'e', 'v')
if not f[1] or tonumber(f[1]) <= now or f[2] == '1' then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 1
`;

/** KEYS[1] grant hash, KEYS[2] its jti set. ARGV now. Marks revoked and returns {jti, exp, …} still alive. */
const REVOKE_GRANT = `
local now = tonumber(ARGV[1])
local e = redis.call('HGET', KEYS[1], 'e')
if not e or tonumber(e) <= now then return {} end
redis.call('HSET', KEYS[1], 'v', '1')
local live = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[1], '+inf', 'WITHSCORES')
redis.call('DEL', KEYS[2])
return live
`;

/** KEYS[1] counter hash. ARGV now, windowSeconds. Returns {count, resetAt}. */
const INCREMENT = `
local now = tonumber(ARGV[1])
local r = tonumber(redis.call('HGET', KEYS[1], 'r'))
if r and r <= now then
  redis.call('DEL', KEYS[1])
  r = nil
end
if not r then
  r = now + tonumber(ARGV[2])
  redis.call('HSET', KEYS[1], 'r', r)
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return { redis.call('HINCRBY', KEYS[1], 'c', 1), r }
`;

type ScriptedRedis = RedisClient & {
  portcullisAuthConsume(key: string, now: number): Promise<number>;
  portcullisAuthAddToken(grant: string, jtis: string, now: number, jti: string, exp: number): Promise<number>;
  portcullisAuthRevoke(grant: string, jtis: string, now: number): Promise<string[]>;
  portcullisAuthIncrement(key: string, now: number, window: number): Promise<[number, number]>;
};

const scripts: RedisScripts = {
  portcullisAuthConsume: { numberOfKeys: 1, lua: CONSUME },
  portcullisAuthAddToken: { numberOfKeys: 2, lua: ADD_ACCESS_TOKEN },
  portcullisAuthRevoke: { numberOfKeys: 2, lua: REVOKE_GRANT },
  portcullisAuthIncrement: { numberOfKeys: 1, lua: INCREMENT },
};

/** What every store shares: the connection, the clock, the key namespace. */
class Base {
  readonly redis: ScriptedRedis;
  constructor(
    readonly connection: RedisConnection,
    readonly now: Clock,
    readonly namespace: string,
  ) {
    this.redis = withScripts<ScriptedRedis>(connection.client, scripts);
  }

  /** Seconds until `expiresAt` by the server's clock; ≤ 0 means already expired (nothing to store). */
  ttl(expiresAt: number): number {
    return expiresAt - this.now();
  }

  run<T>(what: string, operation: (redis: ScriptedRedis) => Promise<T>): Promise<T> {
    return this.connection.run(`auth ${what}`, () => operation(this.redis));
  }
}

/** Runs a MULTI; a command that failed inside it (EXEC itself succeeds) becomes an error too. */
async function exec(transaction: ChainableCommander): Promise<void> {
  const results = await transaction.exec();
  if (results === null) throw new Error('transaction discarded');
  for (const [error] of results) if (error) throw error;
}

class RedisClientStore implements ClientStore {
  constructor(private readonly base: Base) {}
  #key(clientId: string) {
    return `${this.base.namespace}client:${clientId}`;
  }
  async get(clientId: string) {
    const json = await this.base.run('client get', (r) => r.get(this.#key(clientId)));
    return json === null ? undefined : deepFreeze(JSON.parse(json) as ClientRecord);
  }
  async put(client: ClientRecord) {
    await this.base.run('client put', (r) => r.set(this.#key(client.clientId), JSON.stringify(client)));
  }
  async delete(clientId: string) {
    return (await this.base.run('client delete', (r) => r.del(this.#key(clientId)))) > 0;
  }
}

type OneTime = { id: string; expiresAt: number; consumed: boolean };

class RedisOneTimeStore<T extends OneTime> implements OneTimeStore<T> {
  constructor(
    private readonly base: Base,
    private readonly kind: 'code' | 'refresh',
  ) {}
  #key(id: string) {
    return `${this.base.namespace}${this.kind}:${id}`;
  }
  async put(record: T) {
    const key = this.#key(record.id);
    const ttl = this.base.ttl(record.expiresAt);
    if (ttl <= 0) {
      await this.base.run(`${this.kind} put`, (r) => r.del(key));
      return;
    }
    const { consumed, ...rest } = record;
    await this.base.run(`${this.kind} put`, (r) =>
      exec(
        r
          .multi()
          .hset(key, 'r', JSON.stringify(rest), 'e', record.expiresAt, 'c', consumed ? '1' : '0')
          .expire(key, ttl),
      ),
    );
  }
  async find(id: string) {
    const [json, expiresAt, consumed] = await this.base.run(`${this.kind} find`, (r) =>
      r.hmget(this.#key(id), 'r', 'e', 'c'),
    );
    if (!json || Number(expiresAt) <= this.base.now()) return undefined;
    return deepFreeze({ ...(JSON.parse(json) as Omit<T, 'consumed'>), consumed: consumed === '1' } as T);
  }
  async consume(id: string) {
    const flipped = await this.base.run(`${this.kind} consume`, (r) =>
      r.portcullisAuthConsume(this.#key(id), this.base.now()),
    );
    return Number(flipped) === 1;
  }
  async delete(id: string) {
    await this.base.run(`${this.kind} delete`, (r) => r.del(this.#key(id)));
  }
}

class RedisGrantStore implements GrantStore {
  constructor(private readonly base: Base) {}
  /** The braces make the grant and its jti set one cluster slot, which a script touching both needs. */
  #keys(grantId: string): [string, string] {
    const grant = `${this.base.namespace}grant:{${grantId}}`;
    return [grant, `${grant}:jti`];
  }
  async put(grant: GrantRecord) {
    const [key, jtis] = this.#keys(grant.id);
    const ttl = this.base.ttl(grant.expiresAt);
    await this.base.run('grant put', (r) => {
      const transaction = r.multi().del(key, jtis);
      if (ttl > 0) {
        const { revoked, ...rest } = grant;
        transaction
          .hset(key, 'r', JSON.stringify(rest), 'e', grant.expiresAt, 'v', revoked ? '1' : '0')
          .expire(key, ttl);
      }
      return exec(transaction);
    });
  }
  async get(grantId: string) {
    const [json, expiresAt, revoked] = await this.base.run('grant get', (r) =>
      r.hmget(this.#keys(grantId)[0], 'r', 'e', 'v'),
    );
    if (!json || Number(expiresAt) <= this.base.now()) return undefined;
    return deepFreeze({ ...(JSON.parse(json) as Omit<GrantRecord, 'revoked'>), revoked: revoked === '1' });
  }
  async addAccessToken(grantId: string, jti: string, expiresAt: number) {
    const [key, jtis] = this.#keys(grantId);
    const added = await this.base.run('grant add token', (r) =>
      r.portcullisAuthAddToken(key, jtis, this.base.now(), jti, expiresAt),
    );
    return Number(added) === 1;
  }
  async revoke(grantId: string) {
    const [key, jtis] = this.#keys(grantId);
    const live = await this.base.run('grant revoke', (r) =>
      r.portcullisAuthRevoke(key, jtis, this.base.now()),
    );
    const tokens: { jti: string; expiresAt: number }[] = [];
    for (let i = 0; i + 1 < live.length; i += 2)
      tokens.push({ jti: live[i]!, expiresAt: Number(live[i + 1]) });
    return tokens;
  }
}

class RedisDenylist implements AccessTokenDenylist {
  constructor(private readonly base: Base) {}
  #key(jti: string) {
    return `${this.base.namespace}deny:${jti}`;
  }
  async add(jti: string, expiresAt: number) {
    const ttl = this.base.ttl(expiresAt);
    // A token past its exp is refused by its signature check already; there is nothing to remember.
    if (ttl <= 0) return;
    await this.base.run('denylist add', (r) => r.set(this.#key(jti), String(expiresAt), 'EX', ttl));
  }
  async has(jti: string) {
    const expiresAt = await this.base.run('denylist has', (r) => r.get(this.#key(jti)));
    return expiresAt !== null && Number(expiresAt) > this.base.now();
  }
}

/**
 * Short-lived records keyed by a secret identifier (a session cookie, an interaction id). Only digest(key) is
 * stored, and the record is sealed under a key derived from the identifier, with the Redis key as associated
 * data (a sealed value moved under another key does not open).
 */
class SealedExpiringStore<T> implements ExpiringStore<T> {
  constructor(
    private readonly base: Base,
    private readonly kind: SealedKind,
  ) {}
  #key(key: string) {
    return `${this.base.namespace}${this.kind}:${digest(key)}`;
  }
  async get(key: string) {
    const redisKey = this.#key(key);
    const sealed = await this.base.run(`${this.kind} get`, (r) => r.getBuffer(redisKey));
    if (sealed === null) return undefined;
    // tampered with or sealed under another key: as good as absent
    const entry = unseal<{ e: number; v: T }>(this.kind, key, redisKey, sealed);
    return entry !== undefined && entry.e > this.base.now() ? deepFreeze(entry.v) : undefined;
  }
  async set(key: string, value: T, expiresAt: number) {
    const redisKey = this.#key(key);
    const ttl = this.base.ttl(expiresAt);
    if (ttl <= 0) {
      await this.base.run(`${this.kind} set`, (r) => r.del(redisKey));
      return;
    }
    const sealed = seal(this.kind, key, redisKey, { e: expiresAt, v: value });
    await this.base.run(`${this.kind} set`, (r) => r.set(redisKey, sealed, 'EX', ttl));
  }
  async delete(key: string) {
    return (await this.base.run(`${this.kind} delete`, (r) => r.del(this.#key(key)))) > 0;
  }
}

class RedisCounterStore implements CounterStore {
  constructor(private readonly base: Base) {}
  #key(key: string) {
    return `${this.base.namespace}count:${key}`;
  }
  async increment(key: string, windowSeconds: number) {
    const [count, resetAt] = await this.base.run('counter increment', (r) =>
      r.portcullisAuthIncrement(this.#key(key), this.base.now(), windowSeconds),
    );
    return { count: Number(count), resetAt: Number(resetAt) };
  }
  async get(key: string) {
    const [count, resetAt] = await this.base.run('counter get', (r) => r.hmget(this.#key(key), 'c', 'r'));
    if (count === null || resetAt === null || Number(resetAt) <= this.base.now()) return undefined;
    return { count: Number(count), resetAt: Number(resetAt) };
  }
  async reset(key: string) {
    await this.base.run('counter reset', (r) => r.del(this.#key(key)));
  }
}

/**
 * The authorization server's stores in Redis, shared by every process on the same Redis and keyPrefix. The
 * connection stays the caller's: close() leaves it open (the caller may share it and closes it itself).
 * Every failure to reach Redis surfaces as StateUnavailableError.
 */
export function createRedisStores(connection: RedisConnection, options: RedisStoreOptions = {}): AuthStores {
  const base = new Base(
    connection,
    options.now ?? (() => Math.floor(Date.now() / 1000)),
    options.namespace ?? 'auth:',
  );
  return {
    clients: new RedisClientStore(base),
    codes: new RedisOneTimeStore<AuthorizationCodeRecord>(base, 'code'),
    refreshTokens: new RedisOneTimeStore<RefreshTokenRecord>(base, 'refresh'),
    grants: new RedisGrantStore(base),
    denylist: new RedisDenylist(base),
    sessions: new SealedExpiringStore<SessionRecord>(base, 'session'),
    interactions: new SealedExpiringStore<InteractionRecord>(base, 'interaction'),
    consents: new SealedExpiringStore<ConsentRecord>(base, 'consent'),
    counters: new RedisCounterStore(base),
    async close() {},
  };
}
