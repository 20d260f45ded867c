import { randomUUID } from 'node:crypto';
import type { Logger } from '../../log.js';
import { deliversTo, type LoggedNotification, logIdAfter, type NotificationLog } from './session-store.js';
import type { SseStream } from './sse.js';

/** Entries read from the notification log at once (replay and poll). */
const LOG_PAGE = 100;

/**
 * A stream this process holds (a session's GET stream, or a 2026-07-28 `subscriptions/listen` stream) and the newest
 * logged notification it has seen (where a resume would start).
 */
export interface HeldStream {
  readonly stream: SseStream;
  lastId: string;
  /** The downstream key (`session:<id>`) of a session's GET stream: it also gets what is addressed to it. */
  readonly to?: string;
  /** Writes one logged notification in the stream's own shape. */
  readonly deliver: (entry: LoggedNotification) => void;
  /** Runs when the server ends the stream (shutdown). */
  readonly finish?: () => void;
}

export interface NotificationHubOptions {
  /** The log every process sharing the session store appends to and reads from. */
  readonly log: NotificationLog;
  /** How often a process with open streams reads the shared notification log. Default 1 s. */
  readonly pollMs?: number;
  /** Where failures of the poller go. */
  readonly logger?: Logger;
}

/**
 * Where notifications logged by any process reach the streams this process holds, in both protocol eras: the
 * session era's GET streams and the stateless era's `subscriptions/listen` streams. While it holds streams it polls
 * the shared log, so a notification appended by another process arrives at the next poll; one appended here at once.
 */
export class NotificationHub {
  readonly #o: NotificationHubOptions;
  /** The streams open on this process: GET streams by session id, listen streams by `listen:<n>`. */
  readonly #streams = new Map<string, HeldStream>();
  /**
   * What this process waits for from the others, by downstream key (a call it runs, for a cancellation); all read
   * from one cursor, set when the first one starts.
   */
  readonly #watchers = new Map<string, Set<(entry: LoggedNotification) => void>>();
  #serviceCursor: string | undefined;
  #poller: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #listenStreams = 0;

  constructor(options: NotificationHubOptions) {
    this.#o = options;
  }

  /** Open streams on this process. */
  get openStreams(): number {
    return this.#streams.size;
  }

  /** What the log holds after `after` (one page; nothing without it), and its newest id: where a stream starts. */
  backlog(after: string | undefined): ReturnType<NotificationLog['read']> {
    return this.#o.log.read(after, LOG_PAGE);
  }

  /** The GET stream this process holds for a session, if any. */
  sessionStream(sessionId: string): SseStream | undefined {
    return this.#streams.get(sessionId)?.stream;
  }

  /** Holds a session's GET stream until it closes: from now on it gets what is logged after its `lastId`. */
  holdSessionStream(sessionId: string, held: HeldStream): void {
    this.#hold(sessionId, held);
  }

  /**
   * Holds a `subscriptions/listen` stream: calls `opened` once the stream is registered (nothing logged after that
   * is missed), then `deliver` with the method of each notification logged from then on, until `stream` closes.
   * `finish` runs when the server closes the stream itself (shutdown), before it ends.
   */
  async follow(
    stream: SseStream,
    handlers: { opened(): void; deliver(method: string): void; finish(): void },
  ): Promise<void> {
    const { newest } = await this.backlog(undefined);
    this.#hold(`listen:${++this.#listenStreams}`, {
      stream,
      lastId: newest,
      deliver: (entry) => handlers.deliver(entry.method),
      finish: () => handlers.finish(),
    });
    handlers.opened();
  }

  /**
   * Tells every open stream, on every process sharing the store, that the tool list changed: appended to the shared
   * log (once per `toolsFingerprint`), delivered here at once and by the other processes at their next poll.
   */
  async broadcastToolListChanged(toolsFingerprint: string): Promise<void> {
    await this.#o.log.append('notifications/tools/list_changed', toolsFingerprint);
    await this.#poll();
  }

  /**
   * A notification for one downstream session's GET stream (an upstream server's log message outside a call),
   * whichever process holds it: appended to the shared log for that session only, delivered here at once and by
   * the other processes at their next poll; a stream resumed with Last-Event-ID gets it too.
   */
  async sendTo(to: string, method: string, params?: Record<string, unknown>): Promise<void> {
    await this.#o.log.append(method, randomUUID(), { to, ...(params ? { params } : {}) });
    await this.#poll();
  }

  /**
   * A message for the service process that acts for downstream key `to` (a cancellation of the call it runs):
   * appended to the shared log, never delivered to a client, read by each process's `watch` at its next poll.
   */
  async tellService(to: string, method: string, params: Record<string, unknown>): Promise<void> {
    await this.#o.log.append(method, randomUUID(), { to, params, service: true });
  }

  /**
   * Calls `handler` with each message for the service about downstream key `to` that another process logs from
   * now on, until the returned function is called. The log is polled while anything is watched.
   */
  watch(to: string, handler: (entry: LoggedNotification) => void): () => void {
    const handlers = this.#watchers.get(to) ?? new Set();
    this.#watchers.set(to, handlers);
    handlers.add(handler);
    if (this.#serviceCursor === undefined)
      this.backlog(undefined).then(
        ({ newest }) => {
          if (this.#watchers.size > 0) this.#serviceCursor ??= newest;
        },
        () => {},
      );
    this.#startPoller();
    return () => {
      handlers.delete(handler);
      if (handlers.size === 0 && this.#watchers.get(to) === handlers) this.#watchers.delete(to);
      this.#stopPollerWhenIdle();
    };
  }

  /** Ends every open stream and the poller (the process stops). */
  close(): void {
    clearInterval(this.#poller);
    this.#poller = undefined;
    for (const { stream, finish } of this.#streams.values()) {
      finish?.();
      stream.close();
    }
  }

  #hold(key: string, held: HeldStream): void {
    this.#streams.set(key, held);
    this.#startPoller();
    held.stream.onClose(() => this.#forget(key, held));
  }

  /** Reads the log from the stream furthest behind, once at a time, and writes what each stream lacks. */
  #poll(): Promise<void> {
    this.#polling ??= this.#readLog().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  async #readLog(): Promise<void> {
    const cursors = [...this.#streams.values()].map((held) => held.lastId);
    const service = this.#watchers.size > 0 ? this.#serviceCursor : undefined;
    if (service !== undefined) cursors.push(service);
    if (cursors.length === 0) return;
    const from = cursors.reduce((a, b) => (logIdAfter(a, b) ? b : a));
    let entries: readonly LoggedNotification[];
    try {
      ({ entries } = await this.backlog(from));
    } catch (error) {
      this.#o.logger?.warn('mcp: reading the notification log failed', {
        reason: (error as Error).message,
      });
      return;
    }
    for (const entry of entries) {
      for (const held of this.#streams.values()) {
        if (!logIdAfter(entry.id, held.lastId)) continue;
        if (deliversTo(entry, held.to)) held.deliver(entry);
        held.lastId = entry.id;
      }
      if (service === undefined || !logIdAfter(entry.id, this.#serviceCursor ?? entry.id)) continue;
      this.#serviceCursor = entry.id;
      if (entry.service && entry.to !== undefined)
        for (const handler of this.#watchers.get(entry.to) ?? []) handler(entry);
    }
  }

  #startPoller(): void {
    if (this.#poller) return;
    this.#poller = setInterval(() => void this.#poll(), this.#o.pollMs ?? 1000);
    this.#poller.unref();
  }

  #stopPollerWhenIdle(): void {
    if (this.#watchers.size === 0) this.#serviceCursor = undefined;
    if (this.#streams.size > 0 || this.#watchers.size > 0) return;
    clearInterval(this.#poller);
    this.#poller = undefined;
  }

  #forget(key: string, held: HeldStream): void {
    if (this.#streams.get(key) !== held) return;
    this.#streams.delete(key);
    this.#stopPollerWhenIdle();
  }
}
