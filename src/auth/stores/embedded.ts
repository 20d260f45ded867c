import type { Database } from 'lmdb';
import { errorFields, processLogger } from '../../log.js';
import type { EmbeddedState } from '../../state/embedded.js';
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

export interface EmbeddedStoreOptions {
  /** Epoch seconds; the same clock the authorization server runs on (tests move it). */
  now?: Clock;
  /** How often expired records are removed; default one minute. */
  sweepIntervalMs?: number;
}

/** The embedded store set, with the sweep exposed (tests run it instead of waiting for the timer). */
export interface EmbeddedAuthStores extends AuthStores {
  /** Removes expired records of every kind now; resolves to how many were removed. */
  sweep(): Promise<number>;
}

/*
 * The authorization server's stores in the embedded LMDB environment of `state.dataDir`: what Redis keeps for
 * several machines, kept on one machine across restarts and crashes, shared by every process that opens the
 * same directory.
 *
 * Atomicity: every check-then-change ("consume once", "add a token unless revoked", "revoke and list the
 * tokens", "count one more in this window") runs inside one LMDB write transaction. LMDB has a single writer
 * per environment across processes (a robust mutex in lock.mdb) and a write transaction reads the latest
 * committed state, so two processes redeeming one code see one winner, exactly like the Lua scripts in Redis.
 *
 * Durability: every write is awaited through state.durable() — committed and flushed — before the operation
 * settles, so a response the server sends never names state that a crash could lose.
 *
 * Expiry: each record is stored as { e: expiresAt, … }. Reads compare e with the server's clock (lazy expiry,
 * so behaviour does not depend on when the sweep ran, as in the other stores), and a periodic sweep removes
 * what expired, so the files do not grow with dead entries.
 *
 * Secrets: as in Redis. Codes, refresh tokens, client secrets and registration tokens arrive as digests.
 * Sessions, interactions and consents are keyed by digest(identifier) and sealed under a key derived from the
 * identifier (src/auth/stores/records.ts), so the files hold nothing that lets anyone act as a user.
 *
 * Layout (named databases of the environment):
 *   auth.clients        client_id → ClientRecord (no expiry: a registration lives until deleted)
 *   auth.codes          digest → { e, v: record }          auth.refresh   the same for refresh tokens
 *   auth.grants         grant id → { e, v: GrantRecord, t: [[jti, exp], …] } (its live access tokens)
 *   auth.deny           jti → { e }
 *   auth.sessions|interactions|consents   digest(identifier) → { e, v: sealed bytes }
 *   auth.counters       key → { e: resetAt, v: count }
 */

interface Expiring {
  /** Epoch seconds after which the entry is as good as absent. */
  e: number;
}
interface Held<V> extends Expiring {
  v: V;
}
interface GrantEntry extends Held<GrantRecord> {
  /** The grant's access tokens by jti with their exp, pruned as they expire. */
  t: [string, number][];
}

/** LMDB refuses keys over ~2 KB; identifiers from outside (a username in a counter key) are hashed past this. */
const MAX_PLAIN_KEY_BYTES = 256;

function storageKey(key: string): string {
  return Buffer.byteLength(key) <= MAX_PLAIN_KEY_BYTES ? key : `sha256:${digest(key)}`;
}

/** What every store shares: the environment, the clock, and the databases with an expiry the sweep visits. */
class Base {
  readonly swept: Database<Expiring, string>[] = [];
  constructor(
    readonly state: EmbeddedState,
    readonly now: Clock,
  ) {}

  database<V>(name: string, expiring = true): Database<V, string> {
    const database = this.state.database<V>(`auth.${name}`);
    if (expiring) this.swept.push(database as unknown as Database<Expiring, string>);
    return database;
  }

  /** The entry under `key` unless it expired by the server's clock; inside a write transaction, its state. */
  live<V extends Expiring>(database: Database<V, string>, key: string): V | undefined {
    const entry = database.get(key);
    return entry !== undefined && entry.e > this.now() ? entry : undefined;
  }

  /**
   * live() from the latest commit of any process, for reads outside a write transaction. lmdb-js keeps one read
   * snapshot until the next timer tick, so without the reset a token another process revoked a moment ago could
   * still look alive here.
   */
  latest<V extends Expiring>(database: Database<V, string>, key: string): V | undefined {
    database.resetReadTxn();
    return this.live(database, key);
  }

  /** Runs `change` in one write transaction (atomic across processes) and settles once it is on the disk. */
  atomically<T>(database: Database<unknown, string>, change: () => T): Promise<T> {
    return this.state.durable(database.transaction(change));
  }

  /** Stores `entry` (or removes the key when it is already expired: nothing to keep), durably. */
  async store<V extends Expiring>(database: Database<V, string>, key: string, entry: V): Promise<void> {
    if (entry.e <= this.now()) await this.state.durable(database.remove(key));
    else await this.state.durable(database.put(key, entry));
  }

  /** Removes `key`; true when a live entry was there. */
  remove(database: Database<Expiring, string>, key: string): Promise<boolean> {
    return this.atomically(database, () => {
      const existed = this.live(database, key) !== undefined;
      database.removeSync(key);
      return existed;
    });
  }
}

class EmbeddedClientStore implements ClientStore {
  readonly #clients: Database<ClientRecord, string>;
  constructor(private readonly base: Base) {
    this.#clients = base.database('clients', false);
  }
  async get(clientId: string) {
    this.#clients.resetReadTxn(); // the latest commit of any process, as in Base.latest()
    const client = this.#clients.get(storageKey(clientId));
    return client && deepFreeze(client);
  }
  async put(client: ClientRecord) {
    await this.base.state.durable(this.#clients.put(storageKey(client.clientId), client));
  }
  delete(clientId: string) {
    const key = storageKey(clientId);
    return this.base.atomically(this.#clients, () => {
      const existed = this.#clients.get(key) !== undefined;
      this.#clients.removeSync(key);
      return existed;
    });
  }
}

type OneTime = { id: string; expiresAt: number; consumed: boolean };

class EmbeddedOneTimeStore<T extends OneTime> implements OneTimeStore<T> {
  readonly #records: Database<Held<T>, string>;
  constructor(
    private readonly base: Base,
    kind: 'codes' | 'refresh',
  ) {
    this.#records = base.database(kind);
  }
  put(record: T) {
    return this.base.store(this.#records, storageKey(record.id), { e: record.expiresAt, v: record });
  }
  async find(id: string) {
    const entry = this.base.latest(this.#records, storageKey(id));
    return entry && deepFreeze(entry.v);
  }
  consume(id: string) {
    const key = storageKey(id);
    return this.base.atomically(this.#records, () => {
      const entry = this.base.live(this.#records, key);
      if (entry === undefined || entry.v.consumed) return false;
      this.#records.putSync(key, { e: entry.e, v: { ...entry.v, consumed: true } });
      return true;
    });
  }
  async delete(id: string) {
    await this.base.state.durable(this.#records.remove(storageKey(id)));
  }
}

class EmbeddedGrantStore implements GrantStore {
  readonly #grants: Database<GrantEntry, string>;
  constructor(private readonly base: Base) {
    this.#grants = base.database('grants');
  }
  put(grant: GrantRecord) {
    // A grant written again starts without access tokens, as in the other stores.
    return this.base.store(this.#grants, storageKey(grant.id), { e: grant.expiresAt, v: grant, t: [] });
  }
  async get(grantId: string) {
    const entry = this.base.latest(this.#grants, storageKey(grantId));
    return entry && deepFreeze(entry.v);
  }
  addAccessToken(grantId: string, jti: string, expiresAt: number) {
    const key = storageKey(grantId);
    return this.base.atomically(this.#grants, () => {
      const entry = this.base.live(this.#grants, key);
      if (entry === undefined || entry.v.revoked) return false;
      const now = this.base.now();
      const tokens = entry.t.filter(([, exp]) => exp > now);
      tokens.push([jti, expiresAt]);
      this.#grants.putSync(key, { ...entry, t: tokens });
      return true;
    });
  }
  revoke(grantId: string) {
    const key = storageKey(grantId);
    return this.base.atomically(this.#grants, () => {
      const entry = this.base.live(this.#grants, key);
      if (entry === undefined) return [];
      const now = this.base.now();
      const live = entry.t.filter(([, exp]) => exp > now).map(([jti, exp]) => ({ jti, expiresAt: exp }));
      this.#grants.putSync(key, { e: entry.e, v: { ...entry.v, revoked: true }, t: [] });
      return live;
    });
  }
}

class EmbeddedDenylist implements AccessTokenDenylist {
  readonly #denied: Database<Expiring, string>;
  constructor(private readonly base: Base) {
    this.#denied = base.database('deny');
  }
  async add(jti: string, expiresAt: number) {
    // A token past its exp is refused by its signature check already; there is nothing to remember.
    if (expiresAt <= this.base.now()) return;
    await this.base.store(this.#denied, storageKey(jti), { e: expiresAt });
  }
  async has(jti: string) {
    return this.base.latest(this.#denied, storageKey(jti)) !== undefined;
  }
}

/** Records keyed by a secret identifier: only its digest is a key, the record is sealed under the identifier. */
class SealedExpiringStore<T> implements ExpiringStore<T> {
  readonly #sealed: Database<Held<Uint8Array>, string>;
  constructor(
    private readonly base: Base,
    private readonly kind: SealedKind,
  ) {
    this.#sealed = base.database(`${kind}s`);
  }
  async get(key: string) {
    const stored = digest(key);
    const entry = this.base.latest(this.#sealed, stored);
    if (entry === undefined) return undefined;
    // tampered with or sealed under another key: as good as absent
    const value = unseal<T>(this.kind, key, `${this.kind}:${stored}`, entry.v);
    return value === undefined ? undefined : deepFreeze(value);
  }
  set(key: string, value: T, expiresAt: number) {
    const stored = digest(key);
    return this.base.store(this.#sealed, stored, {
      e: expiresAt,
      v: seal(this.kind, key, `${this.kind}:${stored}`, value),
    });
  }
  delete(key: string) {
    return this.base.remove(this.#sealed, digest(key));
  }
}

class EmbeddedCounterStore implements CounterStore {
  readonly #counters: Database<Held<number>, string>;
  constructor(private readonly base: Base) {
    this.#counters = base.database('counters');
  }
  increment(key: string, windowSeconds: number) {
    const stored = storageKey(key);
    return this.base.atomically(this.#counters, () => {
      const entry = this.base.live(this.#counters, stored) ?? { e: this.base.now() + windowSeconds, v: 0 };
      const next = { e: entry.e, v: entry.v + 1 };
      this.#counters.putSync(stored, next);
      return { count: next.v, resetAt: next.e };
    });
  }
  async get(key: string) {
    const entry = this.base.latest(this.#counters, storageKey(key));
    return entry && { count: entry.v, resetAt: entry.e };
  }
  async reset(key: string) {
    await this.base.state.durable(this.#counters.remove(storageKey(key)));
  }
}

/** Expired keys removed per database and sweep at most, so one sweep never holds the writer for long. */
const SWEEP_BATCH = 1000;

async function sweep(base: Base): Promise<number> {
  let removed = 0;
  for (const database of base.swept) {
    const now = base.now();
    const expired: string[] = [];
    // snapshot: false lets LMDB reuse freed pages while a long scan runs
    for (const { key, value } of database.getRange({ snapshot: false })) {
      if (value.e <= now) expired.push(key);
      if (expired.length >= SWEEP_BATCH) break;
    }
    if (expired.length === 0) continue;
    // Checked again inside the transaction: another process may have written the key anew since the scan.
    removed += await database.transaction(() => {
      let count = 0;
      for (const key of expired) {
        const entry = database.get(key);
        if (entry !== undefined && entry.e <= now) count += database.removeSync(key) ? 1 : 0;
      }
      return count;
    });
  }
  return removed;
}

/**
 * The authorization server's stores in the embedded environment `state` (see openEmbeddedState), shared by every
 * process that opens the same data directory. The environment stays the caller's: close() stops the sweep and
 * leaves it open (the caller may share it and closes it itself).
 */
export function createEmbeddedStores(
  state: EmbeddedState,
  options: EmbeddedStoreOptions = {},
): EmbeddedAuthStores {
  const base = new Base(state, options.now ?? (() => Math.floor(Date.now() / 1000)));
  const stores = {
    clients: new EmbeddedClientStore(base),
    codes: new EmbeddedOneTimeStore<AuthorizationCodeRecord>(base, 'codes'),
    refreshTokens: new EmbeddedOneTimeStore<RefreshTokenRecord>(base, 'refresh'),
    grants: new EmbeddedGrantStore(base),
    denylist: new EmbeddedDenylist(base),
    sessions: new SealedExpiringStore<SessionRecord>(base, 'session'),
    interactions: new SealedExpiringStore<InteractionRecord>(base, 'interaction'),
    consents: new SealedExpiringStore<ConsentRecord>(base, 'consent'),
    counters: new EmbeddedCounterStore(base),
  };
  let sweeping: Promise<unknown> = Promise.resolve();
  const sweeper = setInterval(() => {
    sweeping = sweeping
      .then(() => sweep(base))
      .catch((error: unknown) => processLogger.error('auth store sweep failed', errorFields(error)));
  }, options.sweepIntervalMs ?? 60_000);
  sweeper.unref();
  return {
    ...stores,
    sweep: () => sweep(base),
    async close() {
      clearInterval(sweeper);
      await sweeping;
    },
  };
}
