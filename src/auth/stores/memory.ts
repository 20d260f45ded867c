import type {
  AccessTokenDenylist,
  AuthorizationCodeRecord,
  AuthStores,
  ClientRecord,
  ClientStore,
  CounterStore,
  ExpiringStore,
  GrantRecord,
  GrantStore,
  OneTimeStore,
  RefreshTokenRecord,
} from './types.js';

type Clock = () => number;

/**
 * In-process stores. Expiry is checked against the injected clock on every read (so tests can move time),
 * and a sweep every minute frees what expired. Records are deep-frozen copies taken on write, so callers can
 * never mutate stored state without going through an operation (exactly as with a remote store), and reads
 * on the hot path return the stored object without copying.
 */
class ExpiringMap<T> {
  readonly #entries = new Map<string, { value: T; expiresAt: number }>();
  /** `maxEntries`: past it, the entry written longest ago is dropped (a bound on what anonymous callers can store). */
  constructor(
    private readonly now: Clock,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: T, expiresAt: number): void {
    // Re-inserted, so the Map's order stays the order of the last writes and the first key is the oldest.
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
    this.#entries.set(key, { value, expiresAt });
  }

  delete(key: string): boolean {
    return this.#entries.delete(key);
  }

  sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}

function copy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}

class MemoryClientStore implements ClientStore {
  readonly #clients = new Map<string, ClientRecord>();
  async get(clientId: string) {
    return this.#clients.get(clientId);
  }
  async put(client: ClientRecord) {
    this.#clients.set(client.clientId, copy(client));
  }
  async delete(clientId: string) {
    return this.#clients.delete(clientId);
  }
}

class MemoryOneTimeStore<T extends { id: string; expiresAt: number; consumed: boolean }>
  implements OneTimeStore<T>
{
  constructor(readonly map: ExpiringMap<T>) {}
  async put(record: T) {
    this.map.set(record.id, copy(record), record.expiresAt);
  }
  async find(id: string) {
    return this.map.get(id);
  }
  async consume(id: string) {
    const record = this.map.get(id);
    if (!record || record.consumed) return false;
    this.map.set(id, Object.freeze({ ...record, consumed: true }), record.expiresAt);
    return true;
  }
  async delete(id: string) {
    this.map.delete(id);
  }
}

interface StoredGrant {
  grant: GrantRecord;
  revoked: boolean;
  accessTokens: Map<string, number>;
}

class MemoryGrantStore implements GrantStore {
  constructor(
    readonly map: ExpiringMap<StoredGrant>,
    private readonly now: Clock,
  ) {}
  async put(grant: GrantRecord) {
    this.map.set(
      grant.id,
      { grant: copy(grant), revoked: grant.revoked, accessTokens: new Map() },
      grant.expiresAt,
    );
  }
  async get(grantId: string) {
    const stored = this.map.get(grantId);
    if (!stored) return undefined;
    return stored.revoked === stored.grant.revoked
      ? stored.grant
      : Object.freeze({ ...stored.grant, revoked: stored.revoked });
  }
  async addAccessToken(grantId: string, jti: string, expiresAt: number) {
    const stored = this.map.get(grantId);
    if (!stored || stored.revoked) return false;
    const now = this.now();
    for (const [id, exp] of stored.accessTokens) if (exp <= now) stored.accessTokens.delete(id);
    stored.accessTokens.set(jti, expiresAt);
    return true;
  }
  async revoke(grantId: string) {
    const stored = this.map.get(grantId);
    if (!stored) return [];
    stored.revoked = true;
    const now = this.now();
    const live = [...stored.accessTokens]
      .filter(([, exp]) => exp > now)
      .map(([jti, expiresAt]) => ({ jti, expiresAt }));
    stored.accessTokens.clear();
    return live;
  }
}

class MemoryDenylist implements AccessTokenDenylist {
  constructor(readonly map: ExpiringMap<true>) {}
  async add(jti: string, expiresAt: number) {
    this.map.set(jti, true, expiresAt);
  }
  async has(jti: string) {
    return this.map.get(jti) === true;
  }
}

class MemoryExpiringStore<T> implements ExpiringStore<T> {
  constructor(readonly map: ExpiringMap<T>) {}
  async get(key: string) {
    return this.map.get(key);
  }
  async set(key: string, value: T, expiresAt: number) {
    this.map.set(key, copy(value), expiresAt);
  }
  async delete(key: string) {
    return this.map.delete(key);
  }
}

class MemoryCounterStore implements CounterStore {
  constructor(
    readonly map: ExpiringMap<{ count: number; resetAt: number }>,
    private readonly now: Clock,
  ) {}
  async increment(key: string, windowSeconds: number) {
    let entry = this.map.get(key);
    if (!entry) {
      entry = { count: 0, resetAt: this.now() + windowSeconds };
      this.map.set(key, entry, entry.resetAt);
    }
    entry.count += 1;
    return { ...entry };
  }
  async get(key: string) {
    const entry = this.map.get(key);
    return entry && { ...entry };
  }
  async reset(key: string) {
    this.map.delete(key);
  }
}

export interface MemoryStoreLimits {
  /** Pending authorization requests kept at most (the oldest is dropped past it); unbounded when absent. */
  readonly maxInteractions?: number;
}

/** Creates the in-process store set; `now` returns epoch seconds. */
export function createMemoryStores(
  now: Clock = () => Math.floor(Date.now() / 1000),
  limits: MemoryStoreLimits = {},
): AuthStores {
  const maps: ExpiringMap<unknown>[] = [];
  const map = <T>(maxEntries?: number) => {
    const m = new ExpiringMap<T>(now, maxEntries);
    maps.push(m as ExpiringMap<unknown>);
    return m;
  };
  const sweeper = setInterval(() => {
    for (const m of maps) m.sweep();
  }, 60_000);
  sweeper.unref();
  return {
    clients: new MemoryClientStore(),
    codes: new MemoryOneTimeStore(map<AuthorizationCodeRecord>()),
    refreshTokens: new MemoryOneTimeStore(map<RefreshTokenRecord>()),
    grants: new MemoryGrantStore(map<StoredGrant>(), now),
    denylist: new MemoryDenylist(map<true>()),
    sessions: new MemoryExpiringStore(map()),
    interactions: new MemoryExpiringStore(map(limits.maxInteractions)),
    consents: new MemoryExpiringStore(map()),
    counters: new MemoryCounterStore(map(), now),
    async close() {
      clearInterval(sweeper);
    },
  };
}
