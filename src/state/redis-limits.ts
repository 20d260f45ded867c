import { randomUUID } from 'node:crypto';
import {
  bucketMs,
  type ConcurrencyLease,
  type CountMode,
  type LimitStore,
  type QuotaRequest,
  type QuotaResult,
  type SlidingWindowRequest,
  type SlidingWindowResult,
} from './limits.js';
import {
  type RedisClient,
  type RedisConnection,
  type RedisScripts,
  withScripts,
} from './redis-connection.js';

/*
 * Each operation is one Lua script, so a read-decide-write is atomic across every engine process. Time is Redis's
 * own (`TIME`; Redis 5+ replicates script effects, so reading it is allowed), which keeps processes with skewed
 * clocks on one window. The scripts mirror the rules of limit-rules.ts line for line; change both together.
 * Each script touches its one key only, so on a Redis Cluster it runs whole on the node of that key's slot.
 */

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * KEYS[1] hash bucket → "calls:latest call ms". ARGV: periodMs, bucketMs, limit, amount, mode.
 * Returns {allowed, used, retryMs}.
 */
const SLIDING_WINDOW = `${NOW}
local period = tonumber(ARGV[1])
local width = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local amount = tonumber(ARGV[4])
local mode = ARGV[5]
local current = string.format('%d', math.floor(now / width))
local fields = redis.call('HGETALL', KEYS[1])
local used = 0
local live = {}
local currentCount = 0
for i = 1, #fields, 2 do
  local count, last = string.match(fields[i + 1], '^(%d+):(%d+)$')
  count = tonumber(count)
  last = tonumber(last)
  if last > now - period then
    used = used + count
    live[#live + 1] = { tonumber(fields[i]), count, last }
    if fields[i] == current then currentCount = count end
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
local allowed = mode == 'add' or used + amount <= limit
if allowed and mode ~= 'check' and amount > 0 then
  redis.call('HSET', KEYS[1], current, string.format('%d:%d', currentCount + amount, now))
  redis.call('PEXPIRE', KEYS[1], period)
  used = used + amount
end
if allowed then return { 1, used, 0 } end
table.sort(live, function(a, b) return a[1] < b[1] end)
local need = used + amount - limit
local freed = 0
local retry = period
for _, entry in ipairs(live) do
  freed = freed + entry[2]
  if freed >= need then
    retry = entry[3] + period - now
    break
  end
end
return { 0, used, retry }
`;

/**
 * KEYS[1] hash {w: window index, c: calls, b: bytes, p: periodMs, o: originMs}. ARGV: periodMs (0 = never renews), originMs, callLimit
 * (-1 = none), kilobyteLimit (-1 = none), calls, bytes, mode. Returns {allowed, exceeded (0/1 calls/2 bandwidth),
 * calls, bytes, msToWindowEnd (-1 = never)}.
 */
const QUOTA = `${NOW}
local period = tonumber(ARGV[1])
local origin = tonumber(ARGV[2])
local callLimit = tonumber(ARGV[3])
local kbLimit = tonumber(ARGV[4])
local calls = tonumber(ARGV[5])
local bytes = tonumber(ARGV[6])
local mode = ARGV[7]
local index = 0
local remainingMs = -1
if period > 0 then
  index = math.floor((now - origin) / period)
  remainingMs = origin + (index + 1) * period - now
end
local state = redis.call('HMGET', KEYS[1], 'w', 'c', 'b', 'p', 'o')
local usedCalls = 0
local usedBytes = 0
-- A window is its index under one period and origin (counters written before p and o were kept match any).
if state[1] and tonumber(state[1]) == index
  and (not state[4] or tonumber(state[4]) == period)
  and (not state[5] or tonumber(state[5]) == origin) then
  usedCalls = tonumber(state[2]) or 0
  usedBytes = tonumber(state[3]) or 0
end
local exceeded = 0
if mode ~= 'add' then
  local asked = calls
  if mode == 'check' and asked < 1 then asked = 1 end
  if callLimit >= 0 and usedCalls + asked > callLimit then
    exceeded = 1
  elseif kbLimit >= 0 and usedBytes >= kbLimit * 1024 then
    exceeded = 2
  end
end
if exceeded == 0 and mode ~= 'check' then
  usedCalls = usedCalls + calls
  usedBytes = usedBytes + bytes
  redis.call('HSET', KEYS[1], 'w', string.format('%d', index), 'c', usedCalls, 'b', usedBytes,
    'p', string.format('%d', period), 'o', string.format('%d', origin))
  if remainingMs > 0 then redis.call('PEXPIRE', KEYS[1], remainingMs + 1000) end
end
return { exceeded == 0 and 1 or 0, exceeded, usedCalls, usedBytes, remainingMs }
`;

/** KEYS[1] sorted set token → lease expiry. ARGV: max, leaseMs, token. Returns 1 when the slot is taken. */
const ACQUIRE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`;

type Reply = (number | string)[];

type ScriptedRedis = RedisClient & {
  portcullisSliding(key: string, ...args: (string | number)[]): Promise<Reply>;
  portcullisQuota(key: string, ...args: (string | number)[]): Promise<Reply>;
  portcullisAcquire(key: string, ...args: (string | number)[]): Promise<number>;
};

const scripts: RedisScripts = {
  portcullisSliding: { numberOfKeys: 1, lua: SLIDING_WINDOW },
  portcullisQuota: { numberOfKeys: 1, lua: QUOTA },
  portcullisAcquire: { numberOfKeys: 1, lua: ACQUIRE },
};

const MODES: Record<CountMode, string> = { consume: 'consume', check: 'check', add: 'add' };

/** LimitStore on Redis: N engine processes enforce one limit. Failures throw StateUnavailableError. */
export class RedisLimitStore implements LimitStore {
  readonly #redis: ScriptedRedis;

  constructor(private readonly connection: RedisConnection) {
    this.#redis = withScripts<ScriptedRedis>(connection.client, scripts);
  }

  async slidingWindow(request: SlidingWindowRequest): Promise<SlidingWindowResult> {
    const [allowed, used, retryMs] = await this.connection.run('rate-limit', () =>
      this.#redis.portcullisSliding(
        `rl:${request.key}`,
        request.periodSeconds * 1000,
        bucketMs(request.periodSeconds),
        request.limit,
        request.amount,
        MODES[request.mode],
      ),
    );
    const usedCalls = Number(used);
    return {
      allowed: Number(allowed) === 1,
      used: usedCalls,
      remaining: Math.max(0, request.limit - usedCalls),
      retryAfterSeconds: Number(allowed) === 1 ? 0 : Math.max(1, Math.ceil(Number(retryMs) / 1000)),
    };
  }

  async quota(request: QuotaRequest): Promise<QuotaResult> {
    const [allowed, exceeded, calls, bytes, remainingMs] = await this.connection.run('quota', () =>
      this.#redis.portcullisQuota(
        `quota:${request.key}`,
        request.periodSeconds * 1000,
        request.originMs,
        request.callLimit ?? -1,
        request.kilobyteLimit ?? -1,
        request.calls,
        request.bytes,
        MODES[request.mode],
      ),
    );
    const ms = Number(remainingMs);
    return {
      allowed: Number(allowed) === 1,
      exceeded: Number(exceeded) === 1 ? 'calls' : Number(exceeded) === 2 ? 'bandwidth' : undefined,
      calls: Number(calls),
      bytes: Number(bytes),
      renewsInSeconds: ms < 0 ? undefined : Math.max(1, Math.ceil(ms / 1000)),
    };
  }

  async acquire(key: string, max: number, leaseSeconds: number): Promise<ConcurrencyLease | undefined> {
    const token = randomUUID();
    const taken = await this.connection.run('limit-concurrency', () =>
      this.#redis.portcullisAcquire(`conc:${key}`, max, leaseSeconds * 1000, token),
    );
    return Number(taken) === 1 ? { key, token } : undefined;
  }

  async release(lease: ConcurrencyLease): Promise<void> {
    await this.connection.run('limit-concurrency release', (client) =>
      client.zrem(`conc:${lease.key}`, lease.token),
    );
  }
}
