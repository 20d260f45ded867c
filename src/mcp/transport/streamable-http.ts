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
  sessionRevisions,
} from '../protocol/revisions.js';
import type { Subject } from '../types.js';
import {
  accepts,
  ErrorCodes,
  errorReply,
  type HttpReply,
  type HttpRequestView,
  isJsonContentType,
  jsonReply,
} from './http.js';
import type { Session, SessionStore } from './sessions.js';
import { SseStream } from './sse.js';

export type ResponseMode = 'json' | 'sse';

export interface StreamableHttpOptions {
  readonly dispatcher: Dispatcher;
  readonly sessions: SessionStore;
  /** Builds the method context for one request (everything but revision, subject and session is fixed). */
  readonly context: (revision: Revision, subject: Subject, session: Session | undefined) => MethodContext;
  /** How a POST with requests is answered when the client accepts both JSON and SSE. Default `json`. */
  readonly responseMode?: ResponseMode;
  /** Comment frames on open streams at this interval, so idle proxies keep them. Default 25 s. */
  readonly keepAliveMs?: number;
  /** Most messages in one JSON-RPC batch; a bigger batch is refused whole (400, -32600). Default 50. */
  readonly maxBatchSize?: number;
  /** Requests of one batch that run at the same time; the others wait their turn. Default 4. */
  readonly batchConcurrency?: number;
  /** Optional handler for the stateless 2026-07-28 revision (selected by the `MCP-Protocol-Version` header). */
  readonly stateless?: (request: HttpRequestView, subject: Subject, revision: Revision) => Promise<HttpReply>;
}

/** See `maxBatchSize` and `batchConcurrency`. */
export const defaultMaxBatchSize = 50;
export const defaultBatchConcurrency = 4;

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
export class StreamableHttpTransport {
  readonly #o: StreamableHttpOptions;

  constructor(options: StreamableHttpOptions) {
    this.#o = options;
  }

  async handle(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    const versionHeader = request.header(VERSION_HEADER);
    const stateless = versionHeader ? findRevision(versionHeader) : undefined;
    if (stateless?.stateless) {
      if (!this.#o.stateless) {
        // Not served: answer with the modern error a dual-era client recognises, naming what we do speak,
        // so it falls back to `initialize` instead of guessing (2026-07-28 versioning, backward compatibility).
        return errorReply(400, ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
          data: { supported: sessionRevisions, requested: stateless.id },
        });
      }
      if (request.method !== 'POST') {
        return errorReply(405, ErrorCodes.Transport, `Method not allowed: ${request.method}`, {
          headers: { allow: 'POST' },
        });
      }
      return this.#o.stateless(request, subject, stateless);
    }
    switch (request.method) {
      case 'POST':
        return this.#post(request, subject);
      case 'GET':
        return this.#get(request, subject);
      case 'DELETE':
        return this.#delete(request, subject);
      default:
        return errorReply(405, ErrorCodes.Transport, `Method not allowed: ${request.method}`, {
          headers: { allow: ALLOW },
        });
    }
  }

  /** The revisions this endpoint serves: the session-based ones, plus 2026-07-28 when a handler is given. */
  #served(): readonly string[] {
    return this.#o.stateless ? [...sessionRevisions, '2026-07-28'] : sessionRevisions;
  }

  /** Tells every session with an open GET stream that the tool list changed. */
  broadcastToolListChanged(): number {
    let sent = 0;
    const message = notificationMessage('notifications/tools/list_changed');
    for (const session of this.#o.sessions.withStreams()) if (session.stream!.send(message)) sent++;
    return sent;
  }

  async #post(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    const accept = request.header('accept');
    const wantsJson = accepts(accept, 'application/json');
    const wantsSse = accepts(accept, 'text/event-stream');
    // Lenient on purpose: clients (and proxies) that list only one of the two types are served in that one.
    if (!wantsJson && !wantsSse) {
      return errorReply(
        406,
        ErrorCodes.Transport,
        'Not Acceptable: accept application/json or text/event-stream',
      );
    }
    if (!isJsonContentType(request.header('content-type'))) {
      return errorReply(
        415,
        ErrorCodes.Transport,
        'Unsupported Media Type: Content-Type must be application/json',
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse((request.body ?? Buffer.alloc(0)).toString('utf8'));
    } catch {
      return errorReply(400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
    }
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

    const found = this.#session(request, subject);
    if (!found.ok) return found.reply;
    const session = found.value;
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

    const ctx = this.#o.context(session.revision, subject, session);
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
      return { status: 202, headers: { [SESSION_HEADER]: session.id } };
    }
    const limit = concurrencyLimit(this.#o.batchConcurrency ?? defaultBatchConcurrency);
    const pending = requests.map((r) => limit(() => this.#o.dispatcher.request(r, ctx)));
    return sse
      ? this.#sseReply(pending, invalid, { [SESSION_HEADER]: session.id })
      : this.#jsonReply(pending, invalid, batch, { [SESSION_HEADER]: session.id });
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
      headers[SESSION_HEADER] = this.#o.sessions.create(negotiated, subject).id;
    }
    return sse ? this.#sseReply([Promise.resolve(response)], [], headers) : jsonReply(200, response, headers);
  }

  async #get(request: HttpRequestView, subject: Subject): Promise<HttpReply> {
    if (!accepts(request.header('accept'), 'text/event-stream')) {
      return errorReply(406, ErrorCodes.Transport, 'Not Acceptable: a GET must accept text/event-stream');
    }
    const found = this.#session(request, subject);
    if (!found.ok) return found.reply;
    const session = found.value;
    if (session.stream && !session.stream.closed) {
      return errorReply(409, ErrorCodes.Transport, 'Conflict: this session already has a GET stream open');
    }
    const stream = new SseStream(this.#o.keepAliveMs ?? 25_000);
    session.stream = stream;
    const touch = setInterval(() => this.#o.sessions.touch(session.id), 60_000);
    touch.unref();
    stream.onClose(() => {
      clearInterval(touch);
      if (session.stream === stream) session.stream = undefined;
    });
    return {
      status: 200,
      headers: { ...SSE_HEADERS, [SESSION_HEADER]: session.id },
      body: stream.body,
      onClientClose: () => stream.close(),
    };
  }

  #delete(request: HttpRequestView, subject: Subject): HttpReply {
    const found = this.#session(request, subject);
    if (!found.ok) return found.reply;
    this.#o.sessions.delete(found.value.id);
    return { status: 204, headers: {} };
  }

  /**
   * The session named by `Mcp-Session-Id`, with the `MCP-Protocol-Version` rules: an unsupported version is
   * 400; a missing one means the negotiated version (the session tells us; the spec's 2025-03-26 default is
   * for requests with no other evidence); one that contradicts the negotiated version is 400.
   */
  #session(request: HttpRequestView, subject: Subject): Checked<Session> {
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
    const session = this.#o.sessions.find(id, subject);
    if (!session) {
      return { ok: false, reply: errorReply(404, ErrorCode.SessionNotFound, 'Session not found') };
    }
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
