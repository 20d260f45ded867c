import { createHash, randomBytes } from 'node:crypto';
import {
  type LoggedNotification,
  type NotificationLog,
  type SessionAttachments,
  type SessionOwner,
  type SessionRecord,
  type SessionStore,
  SessionStoreUnavailableError,
} from '../mcp/index.js';
import {
  type RedisClient,
  type RedisConnection,
  type RedisScripts,
  withScripts,
} from '../state/redis-connection.js';
import { RedisStreamLeases } from './mcp-redis-stream-leases.js';

/*
 * MCP sessions in the Redis (or Redis Cluster) of `state.redis`, so every service process behind Envoy serves every
 * session. Layout, under the connection's keyPrefix + `mcp:`:
 *
 *   session:{<tag>}:<rest>     hash v=revision s=sub c=client_id i=1 once initialized, a:<name> its attachments
 *                              (the upstream session of each MCP server API); idle TTL, renewed on use
 *   owner:{<tag>}:<owner>      sorted set of the owner's session ids by creation time, Redis's clock in µs (the per-owner bound)
 *   slots:{<tag>}:<rest>       requests of the session running now; a lease TTL frees what a dead process held
 *   notify                     stream of notifications for every GET stream (field m=method, k=dedupe key), or for
 *                              one session (t=its downstream key, p=params as JSON, x=1 when for the service: a
 *                              cancellation passed to the process running the call)
 *   {streams}:…                the leases on upstream GET streams (mcp-redis-stream-leases.ts)
 *
 * A session id is <tag><rest>: `tag` is 8 characters derived from the owner and `rest` 192 random bits. The tag in
 * braces puts a session and its owner's set in one cluster slot, so creating one is one script and ending the
 * owner's oldest one DEL. Lua scripts touch exactly the keys they are given (ioredis prefixes KEYS, not names built in Lua).
 */

const TAG_LENGTH = 8;
const REST_LENGTH = 32;
/** The notification log keeps about this many entries (list_changed is rare: this spans a long time). */
const LOG_LENGTH = 1000;

/** KEYS[1] slots counter. ARGV limit, lease ms. 1 when a slot was taken. */
const ACQUIRE = `
local n = redis.call('INCR', KEYS[1])
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/** KEYS[1] slots counter. */
const RELEASE = `
if redis.call('DECR', KEYS[1]) <= 0 then redis.call('DEL', KEYS[1]) end
return 1
`;

/**
 * KEYS[1] session hash, KEYS[2] its owner's set. ARGV revision, subject, client id, idle ms, session id. Stores the
 * session and adds it to the owner's set scored by Redis's own clock in microseconds — one clock for every process,
 * fine enough that sessions made in the same millisecond keep their order, and never below the newest score, so
 * "oldest" is the order they were made in. The owner's session count after.
 */
const CREATE = `
redis.call('HSET', KEYS[1], 'v', ARGV[1], 's', ARGV[2], 'c', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
local now = redis.call('TIME')
local score = tonumber(now[1]) * 1000000 + tonumber(now[2])
local newest = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if newest[2] and tonumber(newest[2]) >= score then score = tonumber(newest[2]) + 1 end
redis.call('ZADD', KEYS[2], score, ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return redis.call('ZCARD', KEYS[2])
`;

/** KEYS[1] session hash. Marks it initialized only while it exists (a DELETE may have won). */
const MARK_INITIALIZED = `
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'i', '1') end
return 1
`;

/**
 * KEYS[1] session hash. ARGV field, value. Sets the field unless it is set, only while the session exists (a DELETE
 * may have won); the field's value after, or false.
 */
const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGET', KEYS[1], ARGV[1])
`;

/**
 * KEYS[1] notify stream. ARGV method, dedupe key, max length, then for an addressed entry its downstream key, params
 * (JSON or empty) and '1' when it is for the service. The new entry's id, or the newest one's if its key is equal
 * (an addressed entry is never a duplicate).
 */
const APPEND = `
if not ARGV[4] then
  local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if last[1] then
    local fields = last[1][2]
    for i = 1, #fields, 2 do
      if fields[i] == 'k' and fields[i + 1] == ARGV[2] then return last[1][1] end
    end
  end
  return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[1], 'k', ARGV[2])
end
return redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'm', ARGV[1], 't', ARGV[4], 'p', ARGV[5], 'x', ARGV[6])
`;

type ScriptedRedis = RedisClient & {
  portcullisMcpCreate(
    session: string,
    owner: string,
    revision: string,
    sub: string,
    clientId: string,
    idleMs: number,
    id: string,
  ): Promise<number>;
  portcullisMcpAcquire(key: string, limit: number, leaseMs: number): Promise<number>;
  portcullisMcpRelease(key: string): Promise<number>;
  portcullisMcpMarkInitialized(key: string): Promise<number>;
  portcullisMcpClaim(key: string, field: string, value: string): Promise<string | null>;
  portcullisMcpAppend(
    key: string,
    method: string,
    dedupeKey: string,
    maxLength: number,
    ...addressed: string[]
  ): Promise<string>;
};

const scripts: RedisScripts = {
  portcullisMcpCreate: { numberOfKeys: 2, lua: CREATE },
  portcullisMcpAcquire: { numberOfKeys: 1, lua: ACQUIRE },
  portcullisMcpRelease: { numberOfKeys: 1, lua: RELEASE },
  portcullisMcpMarkInitialized: { numberOfKeys: 1, lua: MARK_INITIALIZED },
  portcullisMcpAppend: { numberOfKeys: 1, lua: APPEND },
  portcullisMcpClaim: { numberOfKeys: 1, lua: CLAIM },
};

export interface RedisSessionStoreOptions {
  /** A session unused for this long is forgotten (default 1 h, as in-process). */
  readonly idleTimeoutMs?: number;
  /** Sessions one user+client may hold; the oldest goes first (default 100). */
  readonly maxSessionsPerSubject?: number;
  /** How long a request slot outlives a process that died holding it (default 5 min). */
  readonly slotLeaseMs?: number;
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** The MCP endpoint's SessionStore over the service's shared Redis connection (which it does not close). */
export class RedisSessionStore implements SessionStore {
  readonly #connection: RedisConnection;
  readonly #redis: ScriptedRedis;
  readonly #idleMs: number;
  readonly #perOwner: number;
  readonly #leaseMs: number;
  readonly notifications: NotificationLog;
  readonly streamLeases: RedisStreamLeases;
  readonly attachments: SessionAttachments = {
    get: async (id, name) => {
      const keys = this.#keys(id);
      if (!keys) return undefined;
      return (await this.#run('attachment get', (r) => r.hget(keys.session, `a:${name}`))) ?? undefined;
    },
    claim: async (id, name, value) => {
      const keys = this.#keys(id);
      if (!keys) return undefined;
      const held = await this.#run('attachment claim', (r) =>
        r.portcullisMcpClaim(keys.session, `a:${name}`, value),
      );
      return held ?? undefined;
    },
    all: async (id) => {
      const keys = this.#keys(id);
      if (!keys) return new Map();
      const fields = await this.#run('attachments', (r) => r.hgetall(keys.session));
      return new Map(
        Object.entries(fields)
          .filter(([field]) => field.startsWith('a:'))
          .map(([field, value]) => [field.slice(2), value]),
      );
    },
  };

  constructor(connection: RedisConnection, options: RedisSessionStoreOptions = {}) {
    this.#connection = connection;
    this.#redis = withScripts<ScriptedRedis>(connection.client, scripts);
    this.#idleMs = options.idleTimeoutMs ?? 60 * 60 * 1000;
    this.#perOwner = options.maxSessionsPerSubject ?? 100;
    this.#leaseMs = options.slotLeaseMs ?? 5 * 60 * 1000;
    this.streamLeases = new RedisStreamLeases(connection);
    this.notifications = {
      append: (method, dedupeKey, addressed) =>
        this.#run('notification append', (r) =>
          r.portcullisMcpAppend(
            'mcp:notify',
            method,
            dedupeKey,
            LOG_LENGTH,
            ...(addressed
              ? [
                  addressed.to,
                  addressed.params === undefined ? '' : JSON.stringify(addressed.params),
                  addressed.service ? '1' : '',
                ]
              : []),
          ),
        ),
      read: (after, limit) => this.#run('notification read', (r) => readLog(r, after, limit)),
    };
  }

  async #run<T>(what: string, operation: (redis: ScriptedRedis) => Promise<T>): Promise<T> {
    try {
      return await this.#connection.run(`mcp session ${what}`, () => operation(this.#redis));
    } catch (error) {
      throw new SessionStoreUnavailableError((error as Error).message, { cause: error });
    }
  }

  /** The session's keys, or undefined for an id this store never made (client input). */
  #keys(id: string): { session: string; slots: string; tag: string } | undefined {
    if (id.length !== TAG_LENGTH + REST_LENGTH || !/^[A-Za-z0-9_-]+$/.test(id)) return undefined;
    const tag = id.slice(0, TAG_LENGTH);
    const rest = id.slice(TAG_LENGTH);
    return { session: `mcp:session:{${tag}}:${rest}`, slots: `mcp:slots:{${tag}}:${rest}`, tag };
  }

  async create(revision: string, owner: SessionOwner): Promise<SessionRecord> {
    const ownerId = digest(JSON.stringify([owner.sub, owner.clientId]));
    const id = ownerId.slice(0, TAG_LENGTH) + randomBytes(24).toString('base64url');
    const keys = this.#keys(id)!;
    const ownerKey = `mcp:owner:{${keys.tag}}:${ownerId}`;
    await this.#run('create', async (r) => {
      const count = await r.portcullisMcpCreate(
        keys.session,
        ownerKey,
        revision,
        owner.sub,
        owner.clientId,
        this.#idleMs,
        id,
      );
      if (count <= this.#perOwner) return;
      // The owner's oldest sessions beyond the bound end (ids that already idled out count until popped).
      const popped = (await r.zpopmin(ownerKey, count - this.#perOwner)).filter((_, i) => i % 2 === 0);
      const gone = popped.flatMap((old) => {
        const oldKeys = this.#keys(old);
        return oldKeys ? [oldKeys.session, oldKeys.slots] : [];
      });
      if (gone.length > 0) await r.del(...gone);
    });
    return { id, revision, sub: owner.sub, clientId: owner.clientId, initialized: false };
  }

  async find(id: string): Promise<SessionRecord | undefined> {
    const keys = this.#keys(id);
    if (!keys) return undefined;
    const fields = await this.#run('find', async (r) => {
      const replies = await r.multi().hgetall(keys.session).pexpire(keys.session, this.#idleMs).exec();
      return (replies?.[0]?.[1] ?? {}) as Record<string, string>;
    });
    if (fields.v === undefined || fields.s === undefined || fields.c === undefined) return undefined;
    return { id, revision: fields.v, sub: fields.s, clientId: fields.c, initialized: fields.i === '1' };
  }

  async markInitialized(id: string): Promise<void> {
    const keys = this.#keys(id);
    if (keys) await this.#run('mark initialized', (r) => r.portcullisMcpMarkInitialized(keys.session));
  }

  async delete(id: string): Promise<void> {
    const keys = this.#keys(id);
    if (keys) await this.#run('delete', (r) => r.del(keys.session, keys.slots));
  }

  async acquire(id: string, limit: number): Promise<(() => void) | undefined> {
    const keys = this.#keys(id);
    if (!keys) return undefined;
    const taken = await this.#run('acquire', (r) => r.portcullisMcpAcquire(keys.slots, limit, this.#leaseMs));
    if (taken !== 1) return undefined;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // A release that fails is made good by the lease.
      this.#run('release', (r) => r.portcullisMcpRelease(keys.slots)).catch(() => {});
    };
  }

  /** The connection is the service's: it closes it after everything that uses it. */
  async close(): Promise<void> {}
}

/** Stream entries after `after` (exclusive) and the newest id; a bare read without `after` returns only the id. */
async function readLog(
  redis: RedisClient,
  after: string | undefined,
  limit: number,
): Promise<{ entries: readonly LoggedNotification[]; newest: string }> {
  const newestOf = (reply: [string, string[]][]) => reply[0]?.[0] ?? '0-0';
  if (after === undefined)
    return { entries: [], newest: newestOf(await redis.xrevrange('mcp:notify', '+', '-', 'COUNT', 1)) };
  const [range, last] = await Promise.all([
    redis.xrange('mcp:notify', `(${after}`, '+', 'COUNT', limit),
    redis.xrevrange('mcp:notify', '+', '-', 'COUNT', 1),
  ]);
  const entries = range.flatMap(([id, fields]) => {
    const entry = entryOf(id, fields);
    return entry ? [entry] : [];
  });
  return { entries, newest: newestOf(last) };
}

/** One stream entry as a logged notification; undefined for one that is not (no method, unreadable params). */
function entryOf(id: string, fields: string[]): LoggedNotification | undefined {
  const byName = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) byName.set(fields[i]!, fields[i + 1]!);
  const method = byName.get('m');
  if (method === undefined) return undefined;
  const to = byName.get('t');
  if (to === undefined || to === '') return { id, method };
  const params = byName.get('p');
  try {
    return {
      id,
      method,
      to,
      ...(params ? { params: JSON.parse(params) as Record<string, unknown> } : {}),
      ...(byName.get('x') === '1' ? { service: true } : {}),
    };
  } catch {
    return undefined;
  }
}
