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
import { findRevision, latestSessionRevision, type Revision } from '../protocol/revisions.js';
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
import type { HeldStream, NotificationHub } from './notification-hub.js';
import { insufficientScope, methodNotAllowed, tooManyRunning } from './refusals.js';
import {
  deliversTo,
  logIdAfter,
  parseLogId,
  type SessionRecord,
  type SessionStore,
  sessionKey,
} from './session-store.js';
import { SSE_HEADERS, SseStream } from './sse.js';

/** A session found for a request: its record and its negotiated revision. */
export interface Session {
  readonly record: SessionRecord;
  readonly revision: Revision;
}

export type ResponseMode = 'json' | 'sse';

export interface SessionHttpOptions {
  readonly dispatcher: Dispatcher;
  readonly sessions: SessionStore;
  /** Carries the log's notifications to the session GET streams this process holds. */
  readonly hub: NotificationHub;
  /** The revisions this endpoint serves, named when a request's `MCP-Protocol-Version` is none of them. */
  readonly served: readonly string[];
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
  /**
   * A client ends its session (DELETE): what the session held elsewhere (upstream sessions) ends too. Called before
   * the store forgets the session, and awaited: it may read what the session holds (its attachments).
   */
  readonly onSessionEnding?: (sessionId: string, subject: Subject) => Promise<void>;
}

/** See `maxBatchSize` and `batchConcurrency`. */
export const defaultMaxBatchSize = 50;
export const defaultBatchConcurrency = 4;
export const defaultMaxConcurrentPerSession = 8;

/** An open GET stream confirms its session this often: keeps it from idling out, ends the stream once it is gone. */
const TOUCH_MS = 60_000;

const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';
const ALLOW = 'GET, POST, DELETE, OPTIONS';

type Checked<T> = { ok: true; value: T } | { ok: false; reply: HttpReply };

/**
 * MCP Streamable HTTP for the session-based revisions (2024-11-05 … 2025-11-25): JSON-RPC over POST, a GET
 * stream per session for server notifications, DELETE to end a session. Framework-free: it reads an
 * `HttpRequestView` and returns an `HttpReply`; authentication has already happened, and the router has judged the
 * request to be of this era.
 */
export class SessionHttp {
  readonly #o: SessionHttpOptions;

  constructor(options: SessionHttpOptions) {
    this.#o = options;
  }

  async handle(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    switch (request.method) {
      case 'POST':
        return this.#post(request, subject);
      case 'GET':
        return this.#get(request, subject);
      case 'DELETE':
        return this.#delete(request, subject);
      default:
        return methodNotAllowed(request.method, ALLOW);
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
    if (missing.length > 0) return insufficientScope(missing, batch ? null : requests[0]!.id);

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
      if (!slot) return tooManyRunning('session', max, batch ? null : requests[0]!.id, sessionHeaders);
      release = slot;
    }
    const limit = concurrencyLimit(this.#o.batchConcurrency ?? defaultBatchConcurrency);
    // A call that may notify before its answer (progress, an upstream's log messages) is answered in SSE when the
    // client accepts it, so those notifications flow as they come instead of being lost to a JSON answer.
    const stream =
      sse || (wantsSse && this.#o.dispatcher.streams(requests, ctx))
        ? new SseStream(this.#o.keepAliveMs ?? 25_000)
        : undefined;
    const requestCtx: MethodContext = stream
      ? { ...ctx, notify: (method, params) => stream.send(notificationMessage(method, params)) }
      : ctx;
    const pending = requests.map((r) => limit(() => this.#o.dispatcher.request(r, requestCtx)));
    // The slot is held until every request has answered, also when the client stopped reading an SSE reply.
    void Promise.allSettled(pending).finally(release);
    return stream
      ? this.#sseReply(pending, invalid, sessionHeaders, stream)
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
    const existing = this.#o.hub.sessionStream(record.id);
    if (existing && !existing.closed) {
      return errorReply(409, ErrorCodes.Transport, 'Conflict: this session already has a GET stream open');
    }
    // A malformed Last-Event-ID is client input like any other: the stream then starts from now.
    const lastEventId = request.header('last-event-id');
    const resumeFrom = lastEventId !== undefined && parseLogId(lastEventId) ? lastEventId : undefined;
    const { entries, newest } = await this.#o.hub.backlog(resumeFrom);

    const stream = new SseStream(this.#o.keepAliveMs ?? 25_000);
    const start = resumeFrom !== undefined && !logIdAfter(resumeFrom, newest) ? resumeFrom : newest;
    const to = sessionKey(record.id);
    const held: HeldStream = {
      stream,
      lastId: start,
      to,
      deliver: (entry) => stream.send(notificationMessage(entry.method, entry.params), entry.id),
    };
    if (revision.primingEvents) stream.prime(start);
    for (const entry of entries) {
      if (deliversTo(entry, to)) held.deliver(entry);
      held.lastId = entry.id;
    }
    this.#o.hub.holdSessionStream(record.id, held);
    const touch = setInterval(() => {
      this.#o.sessions.find(record.id).then(
        (alive) => alive || stream.close(),
        () => {},
      );
    }, TOUCH_MS);
    touch.unref();
    stream.onClose(() => clearInterval(touch));
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
    await this.#o.onSessionEnding?.(id, subject);
    await this.#o.sessions.delete(id);
    // A stream of this session on another process ends at its next check of the session.
    this.#o.hub.sessionStream(id)?.close();
    return { status: 204, headers: {} };
  }

  /**
   * The session named by `Mcp-Session-Id`, with the `MCP-Protocol-Version` rules: an invalid or unsupported
   * version is 400 (the only case the transport spec makes a 400); any supported one is accepted, and the request
   * is served under the negotiated revision, as the TypeScript SDK's server does (a client that sends its own
   * latest version on every request, as the conformance suite's 0.1.16 `server-sse-multiple-streams` does, is not
   * refused). A missing one means the negotiated version (the session tells us; the spec's 2025-03-26 default is
   * for requests with no other evidence).
   */
  async #session(request: HttpRequestView, subject: Subject): Promise<Checked<Session>> {
    const version = request.header(VERSION_HEADER);
    if (version !== undefined && (!findRevision(version) || !this.#o.served.includes(version))) {
      return {
        ok: false,
        reply: errorReply(
          400,
          ErrorCodes.Transport,
          `Bad Request: unsupported MCP-Protocol-Version: ${version}`,
          {
            data: { supported: this.#o.served, requested: version },
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
    return { ok: true, value: { record, revision } };
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
    stream = new SseStream(this.#o.keepAliveMs ?? 25_000),
  ): HttpReply {
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
