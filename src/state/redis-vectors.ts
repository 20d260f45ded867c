import {
  type RedisClient,
  type RedisConnection,
  type RedisScripts,
  withScripts,
} from './redis-connection.js';
import {
  decodeVectorEntry,
  encodeVectorEntry,
  nearestOf,
  partitionKey,
  VECTORS_PER_PARTITION,
  type VectorMatch,
  type VectorStore,
} from './vector-store.js';

/*
 * One partition is three keys in one hash slot (`{…}`), so each script runs whole on one node of a cluster:
 *   sem:{p}:i  sorted set  entry id → expiry (ms, Redis's TIME)
 *   sem:{p}:e  hash        entry id → encodeVectorEntry(vector, value)
 *   sem:{p}:n  counter     the last entry id: ids are zero-padded, so entries that expire in the same
 *                          millisecond sort oldest first
 * All expire with their last entry.
 */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS index, entries. Returns the live entries' bytes (at most ARGV[1]). */
const SCAN = `${NOW}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. now, '+inf', 'LIMIT', 0, tonumber(ARGV[1]))
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(ids))
`;

/**
 * KEYS index, entries, counter. ARGV entry, ttlMs, bound. Drops the expired entries and, past the bound, the
 * ones that expire first (the oldest, for one TTL), then adds the new one.
 */
const ADD = `${NOW}
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
if #expired > 0 then
  redis.call('HDEL', KEYS[2], unpack(expired))
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
end
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
if over > 0 then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, over - 1)
  redis.call('HDEL', KEYS[2], unpack(oldest))
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
end
local ttl = tonumber(ARGV[2])
local id = string.format('%016d', redis.call('INCR', KEYS[3]))
redis.call('ZADD', KEYS[1], now + ttl, id)
redis.call('HSET', KEYS[2], id, ARGV[1])
for _, key in ipairs(KEYS) do
  if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
end
return 1
`;

type ScriptedRedis = RedisClient & {
  portcullisVectorScanBuffer(index: string, entries: string, bound: number): Promise<(Buffer | null)[]>;
  portcullisVectorAdd(
    index: string,
    entries: string,
    counter: string,
    entry: Buffer,
    ttlMs: number,
    bound: number,
  ): Promise<number>;
};

const scripts: RedisScripts = {
  portcullisVectorScan: { numberOfKeys: 2, lua: SCAN },
  portcullisVectorAdd: { numberOfKeys: 3, lua: ADD },
};

/**
 * Vectors in Redis, shared by every engine process: a lookup is one script returning the partition's live
 * entries (bounded), compared here; an insertion one script. Failures throw StateUnavailableError.
 */
export class RedisVectorStore implements VectorStore {
  readonly #redis: ScriptedRedis;

  constructor(private readonly connection: RedisConnection) {
    this.#redis = withScripts<ScriptedRedis>(connection.client, scripts);
  }

  async nearest(
    partition: string,
    vector: Float32Array,
    maxDistance: number,
  ): Promise<VectorMatch | undefined> {
    const [index, entries] = vectorKeys(partition);
    const found = await this.connection.run('semantic cache lookup', () =>
      this.#redis.portcullisVectorScanBuffer(index, entries, VECTORS_PER_PARTITION),
    );
    const live = found.filter((bytes): bytes is Buffer => bytes !== null).map(decodeVectorEntry);
    return nearestOf(vector, live, maxDistance);
  }

  async add(partition: string, vector: Float32Array, value: Buffer, ttlSeconds: number): Promise<void> {
    if (ttlSeconds <= 0) return;
    const [index, entries, counter] = vectorKeys(partition);
    await this.connection.run('semantic cache store', () =>
      this.#redis.portcullisVectorAdd(
        index,
        entries,
        counter,
        encodeVectorEntry(vector, value),
        Math.round(ttlSeconds * 1000),
        VECTORS_PER_PARTITION,
      ),
    );
  }
}

/** The keys of a partition: index, entries, counter (see the top of the file). */
export function vectorKeys(partition: string): [string, string, string] {
  const slot = `sem:{${partitionKey(partition)}}`;
  return [`${slot}:i`, `${slot}:e`, `${slot}:n`];
}
