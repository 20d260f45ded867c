import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.js';
import type { StreamLeases } from '../transport/session-store.js';
import type { Subject } from '../types.js';
import type { SavedUpstreamSession } from './types.js';

/** What a process taking over an upstream session's GET stream needs: whose credential, and which session. */
export interface StreamLeaseData {
  readonly subject: Subject;
  readonly saved: SavedUpstreamSession;
}

export interface StreamOwnershipOptions {
  readonly leases: StreamLeases;
  /** A lease not renewed for this long lapses (default 15 s); it is renewed every third of it. */
  readonly ttlMs?: number;
  /**
   * Another process's lease lapsed (it ended): continue the upstream session here and open its GET stream. Called
   * with the lease not yet taken (`take` takes it).
   */
  readonly takeOver: (session: string, apiId: string, data: StreamLeaseData) => Promise<void>;
  readonly logger: Logger;
}

/** Leases looked at in one round: a process takes over this many upstream streams at a time at most. */
const LAPSED_PAGE = 16;

const leaseKey = (session: string, apiId: string) => `${session}\n${apiId}`;

/**
 * The upstream GET streams this process holds, by lease (StreamLeases): the process that opens an upstream session
 * holds its stream and renews the lease while it lives; when it stops it lets go (another process takes the stream
 * at its next round), and when it dies the lease lapses after `ttlMs`. Each round every process renews its own and
 * looks for lapsed ones; the first to take one continues that session and opens the stream again.
 */
export class StreamOwnership {
  readonly #o: StreamOwnershipOptions;
  readonly #holder = randomUUID();
  readonly #ttlMs: number;
  readonly #mine = new Set<string>();
  readonly #timer: NodeJS.Timeout;
  #round: Promise<void> | undefined;

  constructor(options: StreamOwnershipOptions) {
    this.#o = options;
    this.#ttlMs = options.ttlMs ?? 15_000;
    this.#timer = setInterval(() => {
      this.#round ??= this.#renewAndTakeOver().finally(() => {
        this.#round = undefined;
      });
    }, this.#ttlMs / 3);
    this.#timer.unref();
  }

  /** Whether this process holds the stream of the session's upstream session with `apiId`. */
  holds(session: string, apiId: string): boolean {
    return this.#mine.has(leaseKey(session, apiId));
  }

  /** Takes the lease (a stream this process opened, or one it takes over); true when it has it. */
  async take(session: string, apiId: string, data: StreamLeaseData): Promise<boolean> {
    const key = leaseKey(session, apiId);
    const taken = await this.#o.leases
      .take(key, this.#holder, this.#ttlMs, JSON.stringify(data))
      .catch(() => false);
    if (taken) this.#mine.add(key);
    return taken;
  }

  /** The upstream sessions ended (or were never continued): their leases go. */
  async drop(session: string, apiIds: readonly string[]): Promise<void> {
    const keys = apiIds.map((apiId) => leaseKey(session, apiId));
    for (const key of keys) this.#mine.delete(key);
    await this.#o.leases.drop(keys).catch(() => {});
  }

  /** The process stops: its leases are let go at once, so another process takes the streams at its next round. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    const mine = [...this.#mine];
    this.#mine.clear();
    await this.#o.leases.release(mine, this.#holder).catch(() => {});
  }

  async #renewAndTakeOver(): Promise<void> {
    try {
      if (this.#mine.size > 0) {
        const kept = new Set(await this.#o.leases.renew([...this.#mine], this.#holder, this.#ttlMs));
        for (const key of this.#mine) if (!kept.has(key)) this.#mine.delete(key);
      }
      for (const { key, data } of await this.#o.leases.lapsed(LAPSED_PAGE)) {
        if (this.#mine.has(key)) continue;
        const at = key.lastIndexOf('\n');
        const parsed = parseData(data);
        if (at <= 0 || !parsed) {
          await this.#o.leases.drop([key]);
          continue;
        }
        await this.#o.takeOver(key.slice(0, at), key.slice(at + 1), parsed);
      }
    } catch (error) {
      // A store that does not answer: the leases held lapse, and the next round tries again.
      this.#o.logger.warn('mcp: upstream stream leases could not be renewed or taken over', {
        reason: (error as Error).message,
      });
    }
  }
}

function parseData(data: string): StreamLeaseData | undefined {
  try {
    const parsed = JSON.parse(data) as Partial<StreamLeaseData>;
    const { subject, saved } = parsed;
    if (
      typeof subject?.sub !== 'string' ||
      typeof subject.clientId !== 'string' ||
      !Array.isArray(subject.scopes) ||
      typeof saved?.sessionId !== 'string' ||
      typeof saved.protocolVersion !== 'string'
    )
      return undefined;
    return parsed as StreamLeaseData;
  } catch {
    return undefined;
  }
}
