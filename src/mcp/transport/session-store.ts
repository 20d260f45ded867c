/**
 * Where MCP sessions live: the seam that lets several service processes serve one client. The endpoint keeps
 * nothing about a session in memory that another process would need; an in-process store serves one process, and
 * the service injects a shared one (Redis) when `state.redis` is configured. Open SSE streams stay with the process
 * that holds the connection; what they carry goes through the store's notification log, so every process delivers
 * it and a stream resumed elsewhere (`Last-Event-ID`) replays what it missed.
 */

/** A session as the store keeps it: the negotiated revision and its owner, nothing else. */
export interface SessionRecord {
  readonly id: string;
  /** The negotiated protocol revision's id (`2025-11-25`, …). */
  readonly revision: string;
  /** The session belongs to the user and client that initialized it; anyone else gets 404. */
  readonly sub: string;
  readonly clientId: string;
  /** The client sent `notifications/initialized`. */
  readonly initialized: boolean;
}

export interface SessionOwner {
  readonly sub: string;
  readonly clientId: string;
}

/**
 * One entry of the notification log: a server notification every session's GET stream carries, or one addressed to
 * one downstream session (an upstream server's log message outside a call), or a message from one service process
 * to the others about a downstream session (a cancellation of the call another process runs).
 */
export interface LoggedNotification {
  /** `<ms>-<seq>`, increasing along the log: the SSE event id a client resumes from. */
  readonly id: string;
  /** The JSON-RPC notification's method (`notifications/tools/list_changed`). */
  readonly method: string;
  /** Absent for every stream; else the one downstream key (`session:<id>`, upstream/caller.ts) it is for. */
  readonly to?: string;
  /** The notification's params, when it has any. */
  readonly params?: Record<string, unknown>;
  /** For the service processes, never a client's stream (a downstream `notifications/cancelled` passed on). */
  readonly service?: boolean;
}

/** What makes a logged notification one session's (or the service's) instead of every stream's. */
export interface Addressed {
  readonly to: string;
  readonly params?: Record<string, unknown>;
  readonly service?: boolean;
}

/** The downstream key of a session: what entries addressed to it name (and its upstream sessions are kept under). */
export function sessionKey(sessionId: string): string {
  return `session:${sessionId}`;
}

/** Whether a stream that carries downstream key `to` (undefined: a stream of no session) delivers `entry`. */
export function deliversTo(entry: LoggedNotification, to: string | undefined): boolean {
  return !entry.service && (entry.to === undefined || entry.to === to);
}

/**
 * Notifications for every session, in one order shared by all processes. A process appends what it has to say
 * and reads what was appended since its last look (its own entries included), then writes them to its open
 * streams.
 */
export interface NotificationLog {
  /**
   * Appends `method` unless the newest entry already carries the same `dedupeKey` (several processes reloading
   * one configuration announce one change once). Returns the entry's id, or the existing one's. `addressed` makes
   * it one session's, or the service processes' (its dedupe key is then unique: each is its own message).
   */
  append(method: string, dedupeKey: string, addressed?: Addressed): Promise<string>;
  /**
   * Entries after `after` (all retained ones when it is older than the log), oldest first, at most `limit`; and
   * the id of the newest entry (`0-0` for an empty log). Without `after`: no entries, only the newest id.
   */
  read(
    after: string | undefined,
    limit: number,
  ): Promise<{ entries: readonly LoggedNotification[]; newest: string }>;
}

/**
 * Values a session holds for the endpoint's other parts, by name, gone with the session: the upstream session each
 * MCP server API has for it (upstream/sessions.ts), so the process that serves its next request continues that one
 * instead of opening another. Only a store shared by processes needs them (one process keeps its own in memory).
 */
export interface SessionAttachments {
  get(id: string, name: string): Promise<string | undefined>;
  /** Stores `value` unless the session already holds one under `name`; returns the value held after (ours or theirs). */
  claim(id: string, name: string, value: string): Promise<string | undefined>;
  /** Every value the session holds (read when it ends, before the store forgets it). */
  all(id: string): Promise<ReadonlyMap<string, string>>;
}

/**
 * Which service process holds the GET stream of each upstream session (where an upstream server's notifications
 * outside a call arrive): a lease its holder renews, so one that lapses (its process ended or stopped) is taken by
 * another process, which opens the stream again. Keys are `<downstream session id>\n<api id>`; each lease carries what
 * a taker needs (upstream/stream-leases.ts).
 */
export interface StreamLeases {
  /** Takes `key` for `holder` unless another holder's lease is live; true when `holder` has it after. */
  take(key: string, holder: string, ttlMs: number, data: string): Promise<boolean>;
  /** Extends the leases `holder` has among `keys` (and takes back one nobody holds); the keys it has after. */
  renew(keys: readonly string[], holder: string, ttlMs: number): Promise<string[]>;
  /** Lets go of `holder`'s leases among `keys` at once: another process takes them at its next look. */
  release(keys: readonly string[], holder: string): Promise<void>;
  /** Leases lapsed now, with their data, at most `limit`. */
  lapsed(limit: number): Promise<{ key: string; data: string }[]>;
  /** Forgets the leases (their sessions ended). */
  drop(keys: readonly string[]): Promise<void>;
}

export interface SessionStore {
  /** Opens a session for `owner`; the owner's oldest sessions beyond the store's per-owner bound are ended. */
  create(revision: string, owner: SessionOwner): Promise<SessionRecord>;
  /** The session, or undefined when unknown or idle too long. Counts as a use: its idle timer restarts. */
  find(id: string): Promise<SessionRecord | undefined>;
  markInitialized(id: string): Promise<void>;
  delete(id: string): Promise<void>;
  /**
   * Takes one of `limit` slots for a request of session `id` across every process sharing the store; the result
   * releases it (once), or is undefined when all are taken. A process that dies holding a slot frees it after
   * the store's lease time.
   */
  acquire(id: string, limit: number): Promise<(() => void) | undefined>;
  readonly notifications: NotificationLog;
  /** Present in a store shared by processes. */
  readonly attachments?: SessionAttachments;
  /** Present in a store shared by processes. */
  readonly streamLeases?: StreamLeases;
  /** Sessions held, when the store can count them cheaply (the in-process store). */
  readonly size?: number;
  close(): Promise<void>;
}

/**
 * A shared store that did not answer (Redis down or slow). The transport answers 503 with a JSON-RPC error: the
 * client may retry; nothing about the session is lost.
 */
export class SessionStoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SessionStoreUnavailableError';
  }
}

/** Parses `<ms>-<seq>`; undefined for anything else (a Last-Event-ID is client input). */
export function parseLogId(id: string): readonly [number, number] | undefined {
  const match = /^(\d{1,15})-(\d{1,15})$/.exec(id);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** True when log id `a` comes after `b`. */
export function logIdAfter(a: string, b: string): boolean {
  const [x, y] = [parseLogId(a), parseLogId(b)];
  if (!x || !y) return false;
  return x[0] > y[0] || (x[0] === y[0] && x[1] > y[1]);
}
