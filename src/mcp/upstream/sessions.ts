import type { LoggingLevel } from '@modelcontextprotocol/client';
import type { Logger } from '../../log.js';
import { type SessionAttachments, type StreamLeases, sessionKey } from '../transport/session-store.js';
import type { Subject } from '../types.js';
import { UpstreamConnection } from './connection.js';
import { type StreamLeaseData, StreamOwnership } from './stream-leases.js';
import type { SavedUpstreamSession, UpstreamRouter, UpstreamServer } from './types.js';

export interface UpstreamSessionsOptions {
  readonly router: UpstreamRouter;
  readonly timeoutMs: number;
  /** An upstream session unused this long is ended (a downstream session that vanished without DELETE). */
  readonly idleMs: number;
  /** Some upstream said its tool list changed. */
  readonly onToolsChanged: (server: UpstreamServer) => void;
  /**
   * The shared session store's attachments, when service processes share sessions: each upstream session is written
   * with its downstream session, so a process that serves the session's next request continues it.
   */
  readonly attachments?: SessionAttachments | undefined;
  /** With `attachments`: which process holds each upstream session's GET stream (stream-leases.ts). */
  readonly streamLeases?: StreamLeases | undefined;
  /** The servers now (a stream taken over is of a server still configured). */
  readonly servers: () => readonly UpstreamServer[];
  /** A server's notification outside a call, for the downstream session (key) whose upstream session it came on. */
  readonly onNotification: (downstream: string, method: string, params: Record<string, unknown>) => void;
  readonly logger: Logger;
}

/** A downstream key's session id (`session:<id>`, caller.ts); a stateless owner's key has none. */
function sessionOf(downstream: string): string | undefined {
  return downstream.startsWith('session:') ? downstream.slice('session:'.length) : undefined;
}

/** The attachment that holds a server's upstream session. */
const attachmentOf = (server: UpstreamServer) => `upstream:${server.apiId}`;

function parseSaved(value: string | undefined): SavedUpstreamSession | undefined {
  if (value === undefined) return undefined;
  try {
    const saved = JSON.parse(value) as Partial<SavedUpstreamSession>;
    return typeof saved.sessionId === 'string' && typeof saved.protocolVersion === 'string'
      ? {
          sessionId: saved.sessionId,
          protocolVersion: saved.protocolVersion,
          logging: saved.logging === true,
        }
      : undefined;
  } catch {
    return undefined;
  }
}

interface Held {
  readonly connection: Promise<UpstreamConnection>;
  readonly server: UpstreamServer;
  lastUsed: number;
  /** Set once the connection is open. */
  open?: UpstreamConnection;
}

/**
 * The upstream sessions of this process: one per downstream session and server, opened on first use and ended with
 * the downstream session (its DELETE), when idle too long, or when the server leaves the configuration. A stateless
 * (2026-07-28) caller has no session: its key is its owner, `sub` + `client_id`.
 */
export class UpstreamSessions {
  readonly #held = new Map<string, Held>();
  /** The log level each downstream session asked for (`logging/setLevel`), for the upstream sessions it opens. */
  readonly #logLevels = new Map<string, LoggingLevel>();
  readonly #sweeper: NodeJS.Timeout;
  /** The connections whose GET stream this process opened (at `initialize`, or on taking the stream over). */
  readonly #listening = new WeakSet<UpstreamConnection>();
  /** Which upstream GET streams this process holds, when processes share sessions. */
  readonly #streams: StreamOwnership | undefined;

  constructor(private readonly options: UpstreamSessionsOptions) {
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(options.idleMs, 60_000));
    this.#sweeper.unref();
    this.#streams =
      options.attachments && options.streamLeases
        ? new StreamOwnership({
            leases: options.streamLeases,
            takeOver: (session, apiId, data) => this.#takeOver(session, apiId, data),
            logger: options.logger,
          })
        : undefined;
  }

  /** How many upstream sessions are open or opening (for stats and tests). */
  get size(): number {
    return this.#held.size;
  }

  /** The connection for (downstream key, server), opened if there is none; a failed open is not kept. */
  connection(downstream: string, server: UpstreamServer, subject: Subject): Promise<UpstreamConnection> {
    const key = `${downstream}\n${server.apiId}`;
    const held = this.#held.get(key);
    if (held && held.server === server) {
      held.lastUsed = Date.now();
      return held.connection;
    }
    if (held) this.#end(key, held);
    const opening = this.#open(downstream, server, subject);
    const entry: Held = { connection: opening, server, lastUsed: Date.now() };
    this.#held.set(key, entry);
    opening.then(
      (connection) => {
        entry.open = connection;
      },
      () => {
        if (this.#held.get(key) === entry) this.#held.delete(key);
      },
    );
    return opening;
  }

  /**
   * Continues the upstream session the downstream session already has (another process opened it), or opens one
   * and writes it with the downstream session. Two processes opening at once: the first written wins, and the other
   * ends its own and continues that one.
   */
  async #open(downstream: string, server: UpstreamServer, subject: Subject): Promise<UpstreamConnection> {
    const connection = await this.#openOrResume(downstream, server, subject);
    const level = this.#logLevels.get(downstream);
    // A level the server refuses costs only the filtering of its log messages.
    if (level) await connection.setLogLevel(level).catch(() => {});
    return connection;
  }

  async #openOrResume(
    downstream: string,
    server: UpstreamServer,
    subject: Subject,
  ): Promise<UpstreamConnection> {
    const route = this.options.router(server, subject);
    const options = {
      timeoutMs: this.options.timeoutMs,
      onToolsChanged: () => this.options.onToolsChanged(server),
      onNotification: (method: string, params: Record<string, unknown>) =>
        this.options.onNotification(downstream, method, params),
    };
    const session = sessionOf(downstream);
    const attachments = session === undefined ? undefined : this.options.attachments;
    const resume = async (saved: SavedUpstreamSession | undefined) =>
      saved && (await UpstreamConnection.resume(route, saved, options).catch(() => undefined));
    if (attachments && session !== undefined) {
      // A store that does not answer costs only the continuation: this process opens its own.
      const held = await attachments.get(session, attachmentOf(server)).catch(() => undefined);
      const resumed = await resume(parseSaved(held));
      if (resumed) return resumed;
    }
    const connection = await UpstreamConnection.open(route, options);
    this.#listening.add(connection);
    const saved = connection.saved;
    if (attachments && session !== undefined && saved) {
      const mine = JSON.stringify(saved);
      const held = await attachments.claim(session, attachmentOf(server), mine).catch(() => mine);
      if (held !== undefined && held !== mine) {
        const theirs = await resume(parseSaved(held));
        if (theirs) {
          void connection.close();
          return theirs;
        }
      }
      // This process opened the session kept with the downstream one, and with it the server's GET stream: it holds
      // the stream's lease.
      if (held === mine) {
        const { sub, clientId, scopes } = subject;
        await this.#streams?.take(session, server.apiId, { subject: { sub, clientId, scopes }, saved });
      }
    }
    return connection;
  }

  /**
   * The process that held an upstream session's GET stream ended: continue the session here and open the stream,
   * once this process has the lease (several may try). A downstream session that is gone (ended or idled out) takes
   * its upstream session with it, as a DELETE would have.
   */
  async #takeOver(session: string, apiId: string, data: StreamLeaseData): Promise<void> {
    const server = this.options.servers().find((s) => s.apiId === apiId);
    const held = server && (await this.options.attachments?.get(session, attachmentOf(server)));
    const saved = parseSaved(held);
    if (!server || saved?.sessionId !== data.saved.sessionId) {
      await this.#streams?.drop(session, [apiId]);
      if (server && !saved)
        void UpstreamConnection.end(this.options.router(server, data.subject), data.saved);
      return;
    }
    if (!(await this.#streams?.take(session, apiId, data))) return;
    try {
      const connection = await this.connection(sessionKey(session), server, data.subject);
      // One opened anew (the server forgot the session) is not the one kept with the downstream session.
      if (connection.saved?.sessionId !== saved.sessionId) throw new Error('not the session kept');
      if (!this.#listening.has(connection)) await connection.openGetStream();
      this.#listening.add(connection);
    } catch {
      // The server forgot the session (or is down): the next request of the downstream session opens another.
      await this.#streams?.drop(session, [apiId]);
    }
  }

  /** The open connection for (downstream key, server), if there is one; opens nothing. */
  peek(downstream: string, server: UpstreamServer): UpstreamConnection | undefined {
    const held = this.#held.get(`${downstream}\n${server.apiId}`);
    return held?.server === server ? held.open : undefined;
  }

  /** The log level a downstream session asked for: each of its upstream sessions opened from now on gets it. */
  setLogLevel(downstream: string, level: LoggingLevel): void {
    this.#logLevels.set(downstream, level);
  }

  /** The open upstream sessions of one downstream session. */
  openOf(downstream: string): { server: UpstreamServer; connection: UpstreamConnection }[] {
    return [...this.#held]
      .filter(([key, held]) => key.startsWith(`${downstream}\n`) && held.open && !held.open.closed)
      .map(([, held]) => ({ server: held.server, connection: held.open! }));
  }

  /**
   * Ends every upstream session of one downstream session (its DELETE), those another process opened too: called
   * before the store forgets the session, it resolves once their ids are read; the DELETEs go on after.
   */
  async endDownstream(
    downstream: string,
    subject: Subject,
    servers: readonly UpstreamServer[],
  ): Promise<void> {
    this.#logLevels.delete(downstream);
    const ended = new Set<string>();
    for (const [key, held] of this.#held)
      if (key.startsWith(`${downstream}\n`)) {
        ended.add(held.server.apiId);
        this.#end(key, held);
      }
    const session = sessionOf(downstream);
    if (!this.options.attachments || session === undefined) return;
    await this.#streams?.drop(
      session,
      servers.map((server) => server.apiId),
    );
    const attached = await this.options.attachments.all(session).catch(() => new Map<string, string>());
    for (const server of servers) {
      const saved = parseSaved(attached.get(attachmentOf(server)));
      if (saved && !ended.has(server.apiId))
        void UpstreamConnection.end(this.options.router(server, subject), saved);
    }
  }

  /** Ends the sessions of servers no longer in `servers` (or replaced by a reload). */
  keepOnly(servers: readonly UpstreamServer[]): void {
    const current = new Set(servers);
    for (const [key, held] of this.#held) if (!current.has(held.server)) this.#end(key, held);
  }

  /**
   * The process stops: the upstream sessions other processes may continue are let go, not ended, and the streams
   * this process held are left to them.
   */
  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.#streams?.close();
    const all = [...this.#held];
    this.#held.clear();
    await Promise.all(all.map(([key, held]) => closeQuietly(held.connection, !this.#shared(key))));
  }

  #sweep(): void {
    const cutoff = Date.now() - this.options.idleMs;
    // One that the shared store holds is only let go here: another process may be using it (see docs). One whose
    // GET stream this process holds stays while its downstream session lives: the stream is the session's.
    for (const [key, held] of this.#held)
      if (held.lastUsed < cutoff) {
        if (this.#holdsStream(key, held)) void this.#keepWhileAlive(key, held);
        else this.#end(key, held, !this.#shared(key));
      }
    // A downstream session that vanished without DELETE leaves its level behind once its sessions are gone.
    const downstreams = new Set([...this.#held.keys()].map((key) => key.slice(0, key.lastIndexOf('\n'))));
    for (const downstream of this.#logLevels.keys())
      if (!downstreams.has(downstream)) this.#logLevels.delete(downstream);
  }

  #holdsStream(key: string, held: Held): boolean {
    const session = sessionOf(key.slice(0, key.lastIndexOf('\n')));
    return session !== undefined && !!this.#streams?.holds(session, held.server.apiId);
  }

  /** An idle upstream session whose stream this process holds: ended once its downstream session is gone. */
  async #keepWhileAlive(key: string, held: Held): Promise<void> {
    const session = sessionOf(key.slice(0, key.lastIndexOf('\n')))!;
    const attached = await this.options.attachments
      ?.get(session, attachmentOf(held.server))
      .catch(() => 'unknown');
    if (attached !== undefined) {
      held.lastUsed = Date.now();
      return;
    }
    await this.#streams?.drop(session, [held.server.apiId]);
    if (this.#held.get(key) === held) this.#end(key, held);
  }

  #shared(key: string): boolean {
    return this.options.attachments !== undefined && sessionOf(key) !== undefined;
  }

  #end(key: string, held: Held, end = true): void {
    this.#held.delete(key);
    if (end && this.#holdsStream(key, held))
      void this.#streams?.drop(sessionOf(key.slice(0, key.lastIndexOf('\n')))!, [held.server.apiId]);
    void closeQuietly(held.connection, end);
  }
}

async function closeQuietly(connection: Promise<UpstreamConnection>, end = true): Promise<void> {
  try {
    await (await connection).close(end);
  } catch {
    // It never opened: nothing to end.
  }
}
