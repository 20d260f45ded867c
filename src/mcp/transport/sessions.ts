import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { SessionView } from '../protocol/method.js';
import type { Revision } from '../protocol/revisions.js';
import type { Subject } from '../types.js';
import type { SseStream } from './sse.js';

export interface Session extends SessionView {
  readonly revision: Revision;
  /** The session belongs to the user and client that initialized it; anyone else gets 404. */
  readonly sub: string;
  readonly clientId: string;
  /** The standalone GET stream, when the client keeps one open (for list_changed). */
  stream: SseStream | undefined;
}

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

function ownerKey(sub: string, clientId: string): string {
  return JSON.stringify([sub, clientId]);
}

/**
 * In-process sessions: a session is only the negotiated revision and its owner, so losing one costs the
 * client a re-initialize. Bounded, least recently used first out.
 */
export class SessionStore {
  readonly #cache: LRUCache<string, Session>;
  /** Session ids per owner, oldest first. */
  readonly #byOwner = new Map<string, string[]>();
  readonly #perOwner: number;

  constructor(options: SessionStoreOptions = {}) {
    this.#perOwner = options.maxSessionsPerSubject ?? 100;
    this.#cache = new LRUCache<string, Session>({
      max: options.maxSessions ?? 10_000,
      ttl: options.idleTimeoutMs ?? 60 * 60 * 1000,
      updateAgeOnGet: true,
      dispose: (session) => {
        session.stream?.close();
        this.#forget(session);
      },
    });
  }

  #forget(session: Session): void {
    const key = ownerKey(session.sub, session.clientId);
    const ids = this.#byOwner.get(key)?.filter((id) => id !== session.id) ?? [];
    if (ids.length > 0) this.#byOwner.set(key, ids);
    else this.#byOwner.delete(key);
  }

  create(revision: Revision, subject: Subject): Session {
    // 192 random bits, base64url: visible ASCII as the transport requires, unguessable as it recommends.
    const id = randomBytes(24).toString('base64url');
    const session: Session = {
      id,
      revision,
      sub: subject.sub,
      clientId: subject.clientId,
      initialized: false,
      stream: undefined,
    };
    const key = ownerKey(subject.sub, subject.clientId);
    const owned = this.#byOwner.get(key) ?? [];
    while (owned.length >= this.#perOwner) this.#cache.delete(owned.shift()!);
    owned.push(id);
    this.#byOwner.set(key, owned);
    this.#cache.set(id, session);
    return session;
  }

  /** The caller's session, or undefined when it is unknown, expired or someone else's. */
  find(id: string, subject: Subject): Session | undefined {
    const session = this.#cache.get(id);
    if (!session || session.sub !== subject.sub || session.clientId !== subject.clientId) return undefined;
    return session;
  }

  delete(id: string): void {
    this.#cache.delete(id);
  }

  /** Keeps a session with an open stream from idling out. */
  touch(id: string): void {
    this.#cache.get(id);
  }

  *withStreams(): Iterable<Session> {
    for (const session of this.#cache.values()) if (session.stream && !session.stream.closed) yield session;
  }

  get size(): number {
    return this.#cache.size;
  }

  clear(): void {
    this.#cache.clear();
  }
}
