import type { LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { Subject } from '../types.js';
import { UpstreamConnection } from './connection.js';
import type { UpstreamRouter, UpstreamServer } from './types.js';

export interface UpstreamSessionsOptions {
  readonly router: UpstreamRouter;
  readonly timeoutMs: number;
  /** An upstream session unused this long is ended (a downstream session that vanished without DELETE). */
  readonly idleMs: number;
  /** Some upstream said its tool list changed. */
  readonly onToolsChanged: (server: UpstreamServer) => void;
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

  constructor(private readonly options: UpstreamSessionsOptions) {
    this.#sweeper = setInterval(() => this.#sweep(), Math.min(options.idleMs, 60_000));
    this.#sweeper.unref();
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
    const level = this.#logLevels.get(downstream);
    const opening = UpstreamConnection.open(this.options.router(server, subject), {
      timeoutMs: this.options.timeoutMs,
      onToolsChanged: () => this.options.onToolsChanged(server),
    }).then(async (connection) => {
      // A level the server refuses costs only the filtering of its log messages.
      if (level) await connection.setLogLevel(level).catch(() => {});
      return connection;
    });
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

  /** Ends every upstream session of one downstream session (its DELETE). */
  endDownstream(downstream: string): void {
    this.#logLevels.delete(downstream);
    for (const [key, held] of this.#held) if (key.startsWith(`${downstream}\n`)) this.#end(key, held);
  }

  /** Ends the sessions of servers no longer in `servers` (or replaced by a reload). */
  keepOnly(servers: readonly UpstreamServer[]): void {
    const current = new Set(servers);
    for (const [key, held] of this.#held) if (!current.has(held.server)) this.#end(key, held);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const all = [...this.#held.values()];
    this.#held.clear();
    await Promise.all(all.map((held) => closeQuietly(held.connection)));
  }

  #sweep(): void {
    const cutoff = Date.now() - this.options.idleMs;
    for (const [key, held] of this.#held) if (held.lastUsed < cutoff) this.#end(key, held);
    // A downstream session that vanished without DELETE leaves its level behind once its sessions are gone.
    const downstreams = new Set([...this.#held.keys()].map((key) => key.slice(0, key.lastIndexOf('\n'))));
    for (const downstream of this.#logLevels.keys())
      if (!downstreams.has(downstream)) this.#logLevels.delete(downstream);
  }

  #end(key: string, held: Held): void {
    this.#held.delete(key);
    void closeQuietly(held.connection);
  }
}

async function closeQuietly(connection: Promise<UpstreamConnection>): Promise<void> {
  try {
    await (await connection).close();
  } catch {
    // It never opened: nothing to end.
  }
}
