import type { Logger } from '../../log.js';
import { concurrencyLimit } from '../protocol/concurrency.js';
import type { Dispatcher } from '../protocol/dispatcher.js';
import {
  classify,
  ErrorCode,
  errorMessage,
  type JsonRpcRequest,
  notificationMessage,
  type OutboundMessage,
} from '../protocol/jsonrpc.js';
import type { MethodContext } from '../protocol/method.js';
import {
  findRevision,
  latestSessionRevision,
  type Revision,
  servedRevisions,
  sessionRevisions,
} from '../protocol/revisions.js';
import type { Subject } from '../types.js';
import {
  accepts,
  ErrorCodes,
  errorReply,
  type HttpReply,
  type HttpRequestView,
  jsonReply,
  readJsonPost,
} from './http.js';
import {
  type LoggedNotification,
  logIdAfter,
  parseLogId,
  type SessionRecord,
  type SessionStore,
  SessionStoreUnavailableError,
} from './session-store.js';
import { SseStream } from './sse.js';
import type { NotificationHub, StatelessHttp } from './stateless-http.js';

/** A session found for a request: its record and its negotiated revision. */
export interface Session {
  readonly record: SessionRecord;
  readonly revision: Revision;
}

export type ResponseMode = 'json' | 'sse';

export interface StreamableHttpOptions {
  readonly dispatcher: Dispatcher;
  readonly sessions: SessionStore;
  /** Builds the method context for one request (everything but revision, subject and session is fixed). */
  readonly context: (
    revision: Revision,
    subject: Subject,
    session: MethodContext['session'],
  ) => MethodContext;
  /** How a POST with requests is answered when the client accepts both JSON and SSE. Default `json`. */
  readonly responseMode?: ResponseMode;
  /** Comment frames on open streams at this interval, so idle proxies keep them. Default 25 s. */
  readonly keepAliveMs?: number;
  /** Most messages in one JSON-RPC batch; a bigger batch is refused whole (400, -32600). Default 50. */
  readonly maxBatchSize?: number;
  /** Requests of one batch that run at the same time; the others wait their turn. Default 4. */
  readonly batchConcurrency?: number;
  /**
   * POSTs with requests one session may have running at once, over every process sharing the session store; one
   * more is refused (429, -32000) until one ends. Default 8.
   */
  readonly maxConcurrentPerSession?: number;
  /** How often a process with open GET streams reads the shared notification log. Default 1 s. */
  readonly notificationPollMs?: number;
  /** Where failures of the notification poller go. */
  readonly logger?: Logger;
  /**
   * The stateless 2026-07-28 revision, for requests whose `MCP-Protocol-Version` names it (or names an unknown
   * revision and carries the 2026 `Mcp-Method` header). Without it such requests get -32022 naming the others.
   */
  readonly stateless?: StatelessHttp;
}

/** See `maxBatchSize` and `batchConcurrency`. */
export const defaultMaxBatchSize = 50;
export const defaultBatchConcurrency = 4;
export const defaultMaxConcurrentPerSession = 8;

/** Entries read from the notification log at once (replay and poll). */
const LOG_PAGE = 100;
/** An open GET stream confirms its session this often: keeps it from idling out, ends the stream once it is gone. */
const TOUCH_MS = 60_000;

/**
 * A stream this process holds (a session's GET stream, or a 2026-07-28 `subscriptions/listen` stream) and the newest
 * logged notification it has seen (where a resume would start).
 */
interface OpenStream {
  readonly stream: SseStream;
  lastId: string;
  /** Writes one logged notification in the stream's own shape. */
  readonly deliver: (entry: LoggedNotification) => void;
  /** Runs when the server ends the stream (shutdown). */
  readonly finish?: () => void;
}
const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';
const ALLOW = 'GET, POST, DELETE, OPTIONS';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

type Checked<T> = { ok: true; value: T } | { ok: false; reply: HttpReply };

/**
 * MCP Streamable HTTP for the session-based revisions (2024-11-05 … 2025-11-25): JSON-RPC over POST, a GET
 * stream per session for server notifications, DELETE to end a session. Framework-free: it reads an
 * `HttpRequestView` and returns an `HttpReply`; authentication has already happened.
 */
export class StreamableHttpTransport implements NotificationHub {
  readonly #o: StreamableHttpOptions;
  /** The streams open on this process: GET streams by session id, listen streams by `listen:<n>`. */
  readonly #streams = new Map<string, OpenStream>();
  #poller: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #listenStreams = 0;

  constructor(options: StreamableHttpOptions) {
    this.#o = options;
  }

  /** Open GET streams on this process. */
  get openStreams(): number {
    return this.#streams.size;
  }

  async handle(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    try {
      return await this.#handle(request, subject);
    } catch (error) {
      if (!(error instanceof SessionStoreUnavailableError)) throw error;
      this.#o.logger?.warn('mcp: session store unavailable', { reason: error.message });
      return errorReply(503, ErrorCodes.Transport, 'Service Unavailable: the session store did not answer', {
        headers: { 'retry-after': '1' },
      });
    }
  }

  async #handle(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    const versionHeader = request.header(VERSION_HEADER);
    const named = versionHeader ? findRevision(versionHeader) : undefined;
    // A 2026 client always sends Mcp-Method; a legacy one never does, so an unknown version with it is the new era's
    // to refuse (-32022 with the request's id), one without it the legacy era's (400, and initialize is never refused).
    const modern =
      named?.stateless === true ||
      (versionHeader !== undefined && !named && request.header('mcp-method') !== undefined);
    if (modern) {
      if (request.method !== 'POST') {
        return errorReply(405, ErrorCodes.Transport, `Method not allowed: ${request.method}`, {
          headers: { allow: 'POST' },
        });
      }
      if (!this.#o.stateless) {
        // Not served: answer with the modern error a dual-era client recognises, naming what we do speak,
        // so it falls back to `initialize` instead of guessing (2026-07-28 versioning, backward compatibility).
        return errorReply(400, ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
          data: { supported: sessionRevisions, requested: versionHeader },
        });
      }
      return this.#o.stateless.handle(request, subject, versionHeader!, this);
    }
    switch (request.method) {
      case 'POST':
        return this.#post(request, subject);
      case 'GET':
        return this.#get(request, subject);
      case 'DELETE':
        return await this.#delete(request, subject);
      default:
        return errorReply(405, ErrorCodes.Transport, `Method not allowed: ${request.method}`, {
          headers: { allow: ALLOW },
        });
    }
  }

  /** The revisions this endpoint serves: the session-based ones, plus 2026-07-28 when a handler is given. */
  #served(): readonly string[] {
    return this.#o.stateless ? servedRevisions : sessionRevisions;
  }

  /** Registers a `subscriptions/listen` stream with the log poller (see `NotificationHub`). */
  async follow(
    stream: SseStream,
    handlers: { opened(): void; deliver(method: string): void; finish(): void },
  ): Promise<void> {
    const { newest } = await this.#o.sessions.notifications.read(undefined, LOG_PAGE);
    const key = `listen:${++this.#listenStreams}`;
    const open: OpenStream = {
      stream,
      lastId: newest,
      deliver: (entry) => handlers.deliver(entry.method),
      finish: () => handlers.finish(),
    };
    this.#streams.set(key, open);
    handlers.opened();
    this.#startPoller();
    stream.onClose(() => this.#forgetStream(key, open));
  }

  /**
   * Tells every session's GET stream, on every process sharing the store, that the tool list changed: appended to
   * the shared log (once per `toolsFingerprint`), delivered here at once and by the other processes at their next
   * poll.
   */
  async broadcastToolListChanged(toolsFingerprint: string): Promise<void> {
    await this.#o.sessions.notifications.append('notifications/tools/list_changed', toolsFingerprint);
    await this.#poll();
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

  /** Reads the log from the stream furthest behind, once at a time, and writes what each stream lacks. */
  #poll(): Promise<void> {
    this.#polling ??= this.#readLog().finally(() => {
      this.#polling = undefined;
    });
    return this.#polling;
  }

  async #readLog(): Promise<void> {
    const open = [...this.#streams.values()];
    if (open.length === 0) return;
    const from = open.reduce((a, b) => (logIdAfter(a.lastId, b.lastId) ? b : a)).lastId;
    let entries: readonly LoggedNotification[];
    try {
      ({ entries } = await this.#o.sessions.notifications.read(from, LOG_PAGE));
    } catch (error) {
      this.#o.logger?.warn('mcp: reading the notification log failed', {
        reason: (error as Error).message,
      });
      return;
    }
    for (const entry of entries) {
      for (const open of this.#streams.values()) {
        if (!logIdAfter(entry.id, open.lastId)) continue;
        open.deliver(entry);
        open.lastId = entry.id;
      }
    }
  }

  #startPoller(): void {
    if (this.#poller) return;
    this.#poller = setInterval(() => void this.#poll(), this.#o.notificationPollMs ?? 1000);
    this.#poller.unref();
  }

  #forgetStream(sessionId: string, open: OpenStream): void {
    if (this.#streams.get(sessionId) !== open) return;
    this.#streams.delete(sessionId);
    if (this.#streams.size === 0) {
      clearInterval(this.#poller);
      this.#poller = undefined;
    }
  }

  async #post(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    const post = readJsonPost(request);
    if (!('parsed' in post)) return post;
    const { wantsJson, wantsSse, parsed } = post;
    const batch = Array.isArray(parsed);
    const raw = batch ? (parsed as unknown[]) : [parsed];
    if (raw.length === 0) return errorReply(400, ErrorCode.InvalidRequest, 'Invalid Request: empty batch');
    // Refused before anything is read from it: each tools/call would become a call through the gateway.
    const maxBatchSize = this.#o.maxBatchSize ?? defaultMaxBatchSize;
    if (raw.length > maxBatchSize) {
      return errorReply(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: a batch holds at most ${maxBatchSize} messages (mcp.maxBatchSize), got ${raw.length}`,
      );
    }
    const messages = raw.map(classify);
    const sse = wantsSse && (!wantsJson || this.#o.responseMode === 'sse');

    const initializeIndex = messages.findIndex((m) => m.kind === 'request' && m.method === 'initialize');
    if (initializeIndex >= 0) {
      if (batch) {
        return errorReply(
          400,
          ErrorCode.InvalidRequest,
          'Invalid Request: initialize must not be part of a batch',
        );
      }
      return this.#initialize(messages[0] as JsonRpcRequest, subject, sse);
    }

    const found = await this.#session(request, subject);
    if (!found.ok) return found.reply;
    const session = found.value;
    const sessionHeaders = { [SESSION_HEADER]: session.record.id };
    if (batch && !session.revision.batches) {
      return errorReply(
        400,
        ErrorCode.InvalidRequest,
        `Invalid Request: JSON-RPC batches are not part of protocol revision ${session.revision.id}`,
      );
    }
    if (!batch && messages[0]!.kind === 'invalid') {
      return errorReply(400, ErrorCode.InvalidRequest, `Invalid Request: ${messages[0]!.reason}`, {
        id: messages[0]!.id,
      });
    }

    const ctx = this.#o.context(session.revision, subject, this.#view(session.record));
    const requests = messages.filter((m): m is JsonRpcRequest => m.kind === 'request');
    const missing = this.#o.dispatcher.missingScopes(requests, ctx);
    if (missing.length > 0) {
      const refusal = errorReply(
        403,
        ErrorCodes.Transport,
        `Forbidden: the access token lacks scope ${missing.join(' ')}`,
        {
          id: batch ? null : requests[0]!.id,
        },
      );
      return { ...refusal, insufficientScopes: missing };
    }

    for (const message of messages) {
      if (message.kind === 'notification') await this.#o.dispatcher.notification(message, ctx);
    }
    const invalid = messages.flatMap((m) =>
      m.kind === 'invalid'
        ? [errorMessage(m.id, ErrorCode.InvalidRequest, `Invalid Request: ${m.reason}`)]
        : [],
    );
    if (requests.length === 0 && invalid.length === 0) {
      return { status: 202, headers: sessionHeaders };
    }
    let release = (): void => {};
    if (requests.length > 0) {
      const max = this.#o.maxConcurrentPerSession ?? defaultMaxConcurrentPerSession;
      const slot = await this.#o.sessions.acquire(session.record.id, max);
      if (!slot) {
        return errorReply(
          429,
          ErrorCodes.Transport,
          `Too Many Requests: this session already has ${max} requests running (mcp.maxConcurrentRequestsPerSession); retry when one has answered`,
          { id: batch ? null : requests[0]!.id, headers: { 'retry-after': '1', ...sessionHeaders } },
        );
      }
      release = slot;
    }
    const limit = concurrencyLimit(this.#o.batchConcurrency ?? defaultBatchConcurrency);
    const pending = requests.map((r) => limit(() => this.#o.dispatcher.request(r, ctx)));
    // The slot is held until every request has answered, also when the client stopped reading an SSE reply.
    void Promise.allSettled(pending).finally(release);
    return sse
      ? this.#sseReply(pending, invalid, sessionHeaders)
      : this.#jsonReply(pending, invalid, batch, sessionHeaders);
  }

  /** What a method sees of the session: `notifications/initialized` is written through to the store. */
  #view(record: SessionRecord): MethodContext['session'] {
    return {
      id: record.id,
      initialized: record.initialized,
      markInitialized: () => this.#o.sessions.markInitialized(record.id),
    };
  }

  async #initialize(message: JsonRpcRequest, subject: Subject, sse: boolean): Promise<HttpReply> {
    // Never refused because of MCP-Protocol-Version: the version is negotiated in the body.
    const provisional = findRevision(latestSessionRevision)!;
    const response = await this.#o.dispatcher.request(
      message,
      this.#o.context(provisional, subject, undefined),
    );
    const headers: Record<string, string> = {};
    if ('result' in response) {
      const negotiated = findRevision((response.result as { protocolVersion: string }).protocolVersion)!;
      headers[SESSION_HEADER] = (await this.#o.sessions.create(negotiated.id, subject)).id;
    }
    return sse ? this.#sseReply([Promise.resolve(response)], [], headers) : jsonReply(200, response, headers);
  }

  /**
   * The session's stream of server notifications. With `Last-Event-ID` (from this process or another one) it first
   * replays what the log holds after that id; then it carries each new notification, with its log id.
   */
  async #get(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    if (!accepts(request.header('accept'), 'text/event-stream')) {
      return errorReply(406, ErrorCodes.Transport, 'Not Acceptable: a GET must accept text/event-stream');
    }
    const found = await this.#session(request, subject);
    if (!found.ok) return found.reply;
    const { record, revision } = found.value;
    const existing = this.#streams.get(record.id);
    if (existing && !existing.stream.closed) {
      return errorReply(409, ErrorCodes.Transport, 'Conflict: this session already has a GET stream open');
    }
    // A malformed Last-Event-ID is client input like any other: the stream then starts from now.
    const lastEventId = request.header('last-event-id');
    const resumeFrom = lastEventId !== undefined && parseLogId(lastEventId) ? lastEventId : undefined;
    const { entries, newest } = await this.#o.sessions.notifications.read(resumeFrom, LOG_PAGE);

    const stream = new SseStream(this.#o.keepAliveMs ?? 25_000);
    const start = resumeFrom !== undefined && !logIdAfter(resumeFrom, newest) ? resumeFrom : newest;
    const open: OpenStream = {
      stream,
      lastId: start,
      deliver: (entry) => stream.send(notificationMessage(entry.method), entry.id),
    };
    if (revision.primingEvents) stream.prime(start);
    for (const entry of entries) {
      stream.send(notificationMessage(entry.method), entry.id);
      open.lastId = entry.id;
    }
    this.#streams.set(record.id, open);
    this.#startPoller();
    const touch = setInterval(() => {
      this.#o.sessions.find(record.id).then(
        (alive) => alive || stream.close(),
        () => {},
      );
    }, TOUCH_MS);
    touch.unref();
    stream.onClose(() => {
      clearInterval(touch);
      this.#forgetStream(record.id, open);
    });
    return {
      status: 200,
      headers: { ...SSE_HEADERS, [SESSION_HEADER]: record.id },
      body: stream.body,
      onClientClose: () => stream.close(),
    };
  }

  async #delete(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    const found = await this.#session(request, subject);
    if (!found.ok) return found.reply;
    const id = found.value.record.id;
    await this.#o.sessions.delete(id);
    // A stream of this session on another process ends at its next check of the session.
    this.#streams.get(id)?.stream.close();
    return { status: 204, headers: {} };
  }

  /**
   * The session named by `Mcp-Session-Id`, with the `MCP-Protocol-Version` rules: an unsupported version is
   * 400; a missing one means the negotiated version (the session tells us; the spec's 2025-03-26 default is
   * for requests with no other evidence); one that contradicts the negotiated version is 400.
   */
  async #session(request: HttpRequestView, subject: Subject): Promise<Checked<Session>> {
    const version = request.header(VERSION_HEADER);
    if (version !== undefined && !findRevision(version)) {
      return {
        ok: false,
        reply: errorReply(
          400,
          ErrorCodes.Transport,
          `Bad Request: unsupported MCP-Protocol-Version: ${version}`,
          {
            data: { supported: this.#served(), requested: version },
          },
        ),
      };
    }
    const id = request.header(SESSION_HEADER);
    if (!id) {
      return {
        ok: false,
        reply: errorReply(400, ErrorCodes.Transport, 'Bad Request: Mcp-Session-Id header is required'),
      };
    }
    const record = await this.#o.sessions.find(id);
    const revision = record ? findRevision(record.revision) : undefined;
    // Someone else's session is answered like an unknown one: its id tells nothing.
    if (!record || !revision || record.sub !== subject.sub || record.clientId !== subject.clientId) {
      return { ok: false, reply: errorReply(404, ErrorCode.SessionNotFound, 'Session not found') };
    }
    const session: Session = { record, revision };
    if (version !== undefined && version !== session.revision.id) {
      return {
        ok: false,
        reply: errorReply(
          400,
          ErrorCodes.Transport,
          `Bad Request: MCP-Protocol-Version ${version} does not match the negotiated ${session.revision.id}`,
        ),
      };
    }
    return { ok: true, value: session };
  }

  async #jsonReply(
    pending: readonly Promise<OutboundMessage>[],
    invalid: readonly OutboundMessage[],
    batch: boolean,
    headers: Record<string, string>,
  ): Promise<HttpReply> {
    const responses = [...invalid, ...(await Promise.all(pending))];
    return jsonReply(200, batch ? responses : responses[0], headers);
  }

  /** Streams each response as soon as it is ready, then ends the stream (transport: SHOULD close after). */
  #sseReply(
    pending: readonly Promise<OutboundMessage>[],
    invalid: readonly OutboundMessage[],
    headers: Record<string, string>,
  ): HttpReply {
    const stream = new SseStream(this.#o.keepAliveMs ?? 25_000);
    for (const message of invalid) stream.send(message);
    void Promise.all(pending.map((p) => p.then((message) => stream.send(message)))).finally(() =>
      stream.close(),
    );
    return {
      status: 200,
      headers: { ...SSE_HEADERS, ...headers },
      body: stream.body,
      onClientClose: () => stream.close(),
    };
  }
}
