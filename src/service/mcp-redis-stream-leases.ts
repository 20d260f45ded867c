import { SessionStoreUnavailableError, type StreamLeases } from '../mcp/index.js';
import {
  type RedisClient,
  type RedisConnection,
  type RedisScripts,
  withScripts,
} from '../state/redis-connection.js';

/*
 * The leases on upstream GET streams (StreamLeases, mcp/transport/session-store.ts) in the Redis of `state.redis`.
 * Under the connection's keyPrefix + `mcp:{streams}:` (one cluster slot, so each script touches one node):
 *
 *   expiry    sorted set: lease key → when it lapses, Redis's clock in ms (0: let go, to be taken at once)
 *   holder    hash: lease key → the process holding it
 *   data      hash: lease key → what a taker needs (the caller's subject, the upstream session)
 *
 * Times come from Redis's own clock (TIME), one clock for every process.
 */

const KEYS = ['mcp:{streams}:expiry', 'mcp:{streams}:holder', 'mcp:{streams}:data'] as const;

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/** ARGV key, holder, ttl ms, data. 1 when the holder has the lease after. */
const TAKE = `${NOW}
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
local holder = redis.call('HGET', KEYS[2], ARGV[1])
if expiry and tonumber(expiry) > now and holder and holder ~= ARGV[2] then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[4])
return 1
`;

/** ARGV holder, ttl ms, keys…. The keys the holder has after (a lease nobody holds is taken back). */
const RENEW = `${NOW}
local held = {}
for i = 3, #ARGV do
  local key = ARGV[i]
  local holder = redis.call('HGET', KEYS[2], key)
  if redis.call('HEXISTS', KEYS[3], key) == 1 and (holder == ARGV[1] or not holder) then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), key)
    redis.call('HSET', KEYS[2], key, ARGV[1])
    held[#held + 1] = key
  end
end
return held
`;

/** ARGV holder, keys…. */
const RELEASE = `
for i = 2, #ARGV do
  if redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[1] then
    redis.call('HDEL', KEYS[2], ARGV[i])
    redis.call('ZADD', KEYS[1], 0, ARGV[i])
  end
end
return 1
`;

/** ARGV limit. Flat list: key, data, key, data… of the lapsed leases. */
const LAPSED = `${NOW}
local keys = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local out = {}
for _, key in ipairs(keys) do
  local data = redis.call('HGET', KEYS[3], key)
  if data then
    out[#out + 1] = key
    out[#out + 1] = data
  else
    redis.call('ZREM', KEYS[1], key)
    redis.call('HDEL', KEYS[2], key)
  end
end
return out
`;

type LeaseRedis = RedisClient & {
  portcullisLeaseTake(a: string, b: string, c: string, ...args: (string | number)[]): Promise<number>;
  portcullisLeaseRenew(a: string, b: string, c: string, ...args: (string | number)[]): Promise<string[]>;
  portcullisLeaseRelease(a: string, b: string, c: string, ...args: string[]): Promise<number>;
  portcullisLeaseLapsed(a: string, b: string, c: string, limit: number): Promise<string[]>;
};

const scripts: RedisScripts = {
  portcullisLeaseTake: { numberOfKeys: 3, lua: TAKE },
  portcullisLeaseRenew: { numberOfKeys: 3, lua: RENEW },
  portcullisLeaseRelease: { numberOfKeys: 3, lua: RELEASE },
  portcullisLeaseLapsed: { numberOfKeys: 3, lua: LAPSED },
};

/** The upstream GET stream leases over the service's shared Redis connection. */
export class RedisStreamLeases implements StreamLeases {
  readonly #connection: RedisConnection;
  readonly #redis: LeaseRedis;

  constructor(connection: RedisConnection) {
    this.#connection = connection;
    this.#redis = withScripts<LeaseRedis>(connection.client, scripts);
  }

  async #run<T>(what: string, operation: (redis: LeaseRedis) => Promise<T>): Promise<T> {
    try {
      return await this.#connection.run(`mcp stream lease ${what}`, () => operation(this.#redis));
    } catch (error) {
      throw new SessionStoreUnavailableError((error as Error).message, { cause: error });
    }
  }

  async take(key: string, holder: string, ttlMs: number, data: string): Promise<boolean> {
    return (await this.#run('take', (r) => r.portcullisLeaseTake(...KEYS, key, holder, ttlMs, data))) === 1;
  }

  async renew(keys: readonly string[], holder: string, ttlMs: number): Promise<string[]> {
    if (keys.length === 0) return [];
    return this.#run('renew', (r) => r.portcullisLeaseRenew(...KEYS, holder, ttlMs, ...keys));
  }

  async release(keys: readonly string[], holder: string): Promise<void> {
    if (keys.length > 0)
      await this.#run('release', (r) => r.portcullisLeaseRelease(...KEYS, holder, ...keys));
  }

  async lapsed(limit: number): Promise<{ key: string; data: string }[]> {
    const flat = await this.#run('lapsed', (r) => r.portcullisLeaseLapsed(...KEYS, limit));
    const out: { key: string; data: string }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ key: flat[i]!, data: flat[i + 1]! });
    return out;
  }

  async drop(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#run('drop', (r) =>
      r
        .multi()
        .zrem(KEYS[0], ...keys)
        .hdel(KEYS[1], ...keys)
        .hdel(KEYS[2], ...keys)
        .exec(),
    );
  }
}
