import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  type Addressed,
  type LoggedNotification,
  logIdAfter,
  type NotificationLog,
  type SessionOwner,
  type SessionRecord,
  type SessionStore,
} from './session-store.js';

export interface SessionStoreOptions {
  readonly maxSessions?: number;
  /** A session unused for this long is forgotten; its client then gets 404 and initializes again. */
  readonly idleTimeoutMs?: number;
  /**
   * Sessions one user+client may hold; the oldest goes first. Keeps one caller from evicting everyone else's
   * sessions out of the shared LRU by initializing in a loop.
   */
  readonly maxSessionsPerSubject?: number;
}

/** Notifications kept for streams that resume; list_changed is rare, so this spans a long time. */
const LOG_LENGTH = 1000;

function ownerKey(owner: SessionOwner): string {
  return JSON.stringify([owner.sub, owner.clientId]);
}

/** The notification log of one process: an array, appended in order. */
class InProcessNotificationLog implements NotificationLog {
  readonly #entries: (LoggedNotification & { readonly key: string })[] = [];
  #last: readonly [number, number] = [0, 0];

  async append(method: string, dedupeKey: string, addressed?: Addressed): Promise<string> {
    const newest = this.#entries.at(-1);
    if (!addressed && newest?.key === dedupeKey) return newest.id;
    // Increasing even when the clock steps back: the id is a resume point.
    const now = Date.now();
    this.#last = now > this.#last[0] ? [now, 0] : [this.#last[0], this.#last[1] + 1];
    const id = `${this.#last[0]}-${this.#last[1]}`;
    this.#entries.push({ id, method, key: addressed ? '' : dedupeKey, ...addressed });
    if (this.#entries.length > LOG_LENGTH) this.#entries.shift();
    return id;
  }

  async read(after: string | undefined, limit: number) {
    const newest = this.#entries.at(-1)?.id ?? '0-0';
    if (after === undefined) return { entries: [], newest };
    const entries = this.#entries
      .filter((entry) => logIdAfter(entry.id, after))
      .slice(0, limit)
      .map(({ key: _key, ...entry }) => entry);
    return { entries, newest };
  }
}

/**
 * In-process sessions, for one service process (with or without `state.dataDir`: a session is only the negotiated
 * revision and its owner, so losing one at a restart costs the client a re-initialize). Bounded, least recently
 * used first out.
 */
export class InProcessSessionStore implements SessionStore {
  readonly #cache: LRUCache<string, SessionRecord>;
  /** Session ids per owner, oldest first. */
  readonly #byOwner = new Map<string, string[]>();
  readonly #perOwner: number;
  readonly #running = new Map<string, number>();
  readonly notifications: NotificationLog = new InProcessNotificationLog();

  constructor(options: SessionStoreOptions = {}) {
    this.#perOwner = options.maxSessionsPerSubject ?? 100;
    this.#cache = new LRUCache<string, SessionRecord>({
      max: options.maxSessions ?? 10_000,
      ttl: options.idleTimeoutMs ?? 60 * 60 * 1000,
      updateAgeOnGet: true,
      // markInitialized replaces a record: that is no eviction, its owner keeps it.
      noDisposeOnSet: true,
      dispose: (session) => this.#forget(session),
    });
  }

  #forget(session: SessionRecord): void {
    const key = ownerKey(session);
    const ids = this.#byOwner.get(key)?.filter((id) => id !== session.id) ?? [];
    if (ids.length > 0) this.#byOwner.set(key, ids);
    else this.#byOwner.delete(key);
  }

  async create(revision: string, owner: SessionOwner): Promise<SessionRecord> {
    // 192 random bits, base64url: visible ASCII as the transport requires, unguessable as it recommends.
    const id = randomBytes(24).toString('base64url');
    const session: SessionRecord = {
      id,
      revision,
      sub: owner.sub,
      clientId: owner.clientId,
      initialized: false,
    };
    const key = ownerKey(owner);
    const owned = this.#byOwner.get(key) ?? [];
    while (owned.length >= this.#perOwner) this.#cache.delete(owned.shift()!);
    owned.push(id);
    this.#byOwner.set(key, owned);
    this.#cache.set(id, session);
    return session;
  }

  async find(id: string): Promise<SessionRecord | undefined> {
    return this.#cache.get(id);
  }

  async markInitialized(id: string): Promise<void> {
    const session = this.#cache.get(id);
    if (session) this.#cache.set(id, { ...session, initialized: true });
  }

  async delete(id: string): Promise<void> {
    this.#cache.delete(id);
  }

  async acquire(id: string, limit: number): Promise<(() => void) | undefined> {
    const running = this.#running.get(id) ?? 0;
    if (running >= limit) return undefined;
    this.#running.set(id, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#running.get(id) ?? 1) - 1;
      if (left > 0) this.#running.set(id, left);
      else this.#running.delete(id);
    };
  }

  get size(): number {
    return this.#cache.size;
  }

  async close(): Promise<void> {
    this.#cache.clear();
  }
}
