import type { Dispatcher } from '../protocol/dispatcher.js';
import {
  classify,
  ErrorCode,
  type JsonRpcNotification,
  type JsonRpcRequest,
  notificationMessage,
  type OutboundMessage,
  type Params,
  type RequestId,
  resultMessage,
} from '../protocol/jsonrpc.js';
import type { MethodContext } from '../protocol/method.js';
import { findRevision, type Revision, servedRevisions } from '../protocol/revisions.js';
import type { ServerInfo, Subject } from '../types.js';
import {
  ErrorCodes,
  errorReply,
  type HttpReply,
  type HttpRequestView,
  jsonReply,
  readJsonPost,
} from './http.js';
import type { NotificationHub } from './notification-hub.js';
import { insufficientScope, tooManyListening, tooManyRunning, unsupportedVersion } from './refusals.js';
import { SSE_HEADERS, SseStream } from './sse.js';

/** The `_meta` keys of the stateless revision (SEP-2575). */
export const MetaKey = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

/** A `tools/call` argument the client mirrors into `Mcp-Param-<header>` (SEP-2243). */
export interface ParameterHeader {
  readonly argument: string;
  readonly header: string;
  readonly type: 'string' | 'integer' | 'boolean';
}

export interface StatelessHttpOptions {
  readonly dispatcher: Dispatcher;
  /** The arguments of a tool that carry `x-mcp-header` (none for an unknown tool). */
  readonly parameterHeaders: (toolName: string) => readonly ParameterHeader[];
  readonly context: (revision: Revision, subject: Subject, session: undefined) => MethodContext;
  readonly serverInfo: ServerInfo;
  /** Carries the log's notifications to the `subscriptions/listen` streams this process holds. */
  readonly hub: NotificationHub;
  /** How a request is answered when the client accepts both JSON and SSE. Default `json`. */
  readonly responseMode?: 'json' | 'sse';
  readonly keepAliveMs?: number;
  /** Requests one client (`sub` + `client_id`) may have running at once in this process; one more is 429. */
  readonly maxConcurrentPerClient: number;
  /** `subscriptions/listen` streams one client may hold open in this process; one more is 429. */
  readonly maxListenStreamsPerClient: number;
}

/** Methods whose target is mirrored in `Mcp-Name` (SEP-2243), and the body field it mirrors. */
const NAMED_METHODS: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

const BASE64_SENTINEL = /^=\?base64\?(.*)\?=$/s;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * An `Mcp-Name` / `Mcp-Param-*` value as the client meant it: `=?base64?…?=` decoded (strict alphabet and padding),
 * anything else literal. Undefined when the sentinel holds no valid Base64.
 */
export function decodeHeaderValue(raw: string): string | undefined {
  const encoded = BASE64_SENTINEL.exec(raw);
  if (!encoded) return raw;
  if (!BASE64.test(encoded[1]!)) return undefined;
  return Buffer.from(encoded[1]!, 'base64').toString('utf8');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** One POST of the stateless revision, read once; every check below looks at this. */
interface StatelessRequest {
  readonly http: HttpRequestView;
  readonly message: JsonRpcRequest | JsonRpcNotification;
  /** The `MCP-Protocol-Version` header as sent. */
  readonly version: string;
  readonly id: RequestId | null;
  readonly parameterHeaders: (toolName: string) => readonly ParameterHeader[];
}

/** A refusal, or undefined to go on. Each says what rule failed and what was found. */
type Check = (request: StatelessRequest) => HttpReply | undefined;

function headerMismatch(request: StatelessRequest, message: string): HttpReply {
  return errorReply(400, ErrorCode.HeaderMismatch, `Header mismatch: ${message}`, { id: request.id });
}

/** `_meta` carries the protocol version and the client's capabilities on every request (SEP-2575). */
const requestMeta: Check = (request) => {
  if (request.message.kind !== 'request') return undefined;
  const meta = request.message.params._meta;
  const missing = [
    !isObject(meta) || typeof meta[MetaKey.protocolVersion] !== 'string'
      ? MetaKey.protocolVersion
      : undefined,
    !isObject(meta) || !isObject(meta[MetaKey.clientCapabilities]) ? MetaKey.clientCapabilities : undefined,
  ].filter((key) => key !== undefined);
  if (missing.length === 0) return undefined;
  return errorReply(
    400,
    ErrorCode.InvalidParams,
    `Invalid params: params._meta must carry ${missing.join(' and ')}`,
    { id: request.id },
  );
};

/** The `MCP-Protocol-Version` header says what `_meta` says. */
const versionHeaderMatchesMeta: Check = (request) => {
  if (request.message.kind !== 'request') return undefined;
  const inBody = (request.message.params._meta as Params)[MetaKey.protocolVersion];
  if (inBody === request.version) return undefined;
  return headerMismatch(
    request,
    `MCP-Protocol-Version header value '${request.version}' does not match _meta value '${String(inBody)}'`,
  );
};

/** A revision this endpoint does not speak is -32022 naming the ones it does (the client picks one and retries). */
const versionServed: Check = (request) => {
  if (findRevision(request.version)?.stateless) return undefined;
  return unsupportedVersion(request.version, servedRevisions, request.id);
};

/** `Mcp-Method` mirrors the body's method exactly (values are case-sensitive; surrounding whitespace is not). */
const methodHeader: Check = (request) => {
  const header = request.http.header('mcp-method')?.trim();
  if (header === undefined) return headerMismatch(request, 'the Mcp-Method header is required');
  if (header === request.message.method) return undefined;
  return headerMismatch(
    request,
    `Mcp-Method header value '${header}' does not match body value '${request.message.method}'`,
  );
};

/** `Mcp-Name` mirrors `params.name` (or `params.uri`) of the methods that address one tool, prompt or resource. */
const nameHeader: Check = (request) => {
  const field = NAMED_METHODS[request.message.method];
  if (!field) return undefined;
  const inBody = request.message.params[field];
  const raw = request.http.header('mcp-name')?.trim();
  if (raw === undefined) {
    return typeof inBody === 'string'
      ? headerMismatch(request, `the Mcp-Name header is required for ${request.message.method}`)
      : undefined;
  }
  const header = decodeHeaderValue(raw);
  if (header === undefined) return headerMismatch(request, 'the Mcp-Name header holds invalid Base64');
  if (header === inBody) return undefined;
  return headerMismatch(
    request,
    `Mcp-Name header value '${raw}' does not match body value '${String(inBody)}'`,
  );
};

/** What RFC 9110 allows in a field value: visible ASCII, space and tab (anything else must come Base64-encoded). */
const FIELD_VALUE = /^[\t\x20-\x7E]*$/;
/** A JSON number: an integer argument's header is compared as a number (`42.0` equals `42`). */
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Whether a decoded `Mcp-Param-*` value says what the body's argument says, as the argument's type reads it. */
function sameValue(type: ParameterHeader['type'], header: string, inBody: unknown): boolean {
  switch (type) {
    case 'string':
      return header === inBody;
    case 'integer':
      return typeof inBody === 'number' && NUMBER.test(header) && Number(header) === inBody;
    case 'boolean':
      return typeof inBody === 'boolean' && header === String(inBody);
  }
}

/**
 * Each `x-mcp-header` argument of the called tool and its `Mcp-Param-*` header agree: a value in the body needs its
 * header, a header needs a value (null or absent means neither), and the decoded header equals the value.
 */
const parameterHeaders: Check = (request) => {
  if (request.message.method !== 'tools/call') return undefined;
  const { name, arguments: args } = request.message.params;
  if (typeof name !== 'string') return undefined;
  for (const { argument, header, type } of request.parameterHeaders(name)) {
    const field = `Mcp-Param-${header}`;
    const inBody = isObject(args) ? args[argument] : undefined;
    const raw = request.http.header(field.toLowerCase())?.trim();
    if (inBody === undefined || inBody === null) {
      if (raw === undefined) continue;
      return headerMismatch(request, `${field} header is sent but argument "${argument}" is not in the body`);
    }
    if (raw === undefined) {
      return headerMismatch(
        request,
        `the ${field} header is required: argument "${argument}" is in the body`,
      );
    }
    if (!FIELD_VALUE.test(raw)) {
      return headerMismatch(request, `the ${field} header holds characters that must be Base64-encoded`);
    }
    const decoded = decodeHeaderValue(raw);
    if (decoded === undefined) return headerMismatch(request, `the ${field} header holds invalid Base64`);
    if (!sameValue(type, decoded, inBody)) {
      return headerMismatch(
        request,
        `${field} header value '${raw}' does not match body value '${String(inBody)}'`,
      );
    }
  }
  return undefined;
};

/**
 * In this order: a malformed `_meta` is -32602 before its version is compared, and a version is compared with the
 * header before it is judged unsupported (the suite and the schema's examples agree on this order).
 */
const checks: readonly Check[] = [
  requestMeta,
  versionHeaderMatchesMeta,
  versionServed,
  methodHeader,
  nameHeader,
  parameterHeaders,
];

/** Counts what one client holds in this process (running requests, open listen streams), with a bound. */
class PerClientSlots {
  readonly #held = new Map<string, number>();
  constructor(readonly limit: number) {}

  take(subject: Subject): (() => void) | undefined {
    const key = JSON.stringify([subject.sub, subject.clientId]);
    const held = this.#held.get(key) ?? 0;
    if (held >= this.limit) return undefined;
    this.#held.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left > 0) this.#held.set(key, left);
      else this.#held.delete(key);
    };
  }
}

/**
 * Streamable HTTP for the stateless 2026-07-28 revision (SEP-2575, SEP-2243, SEP-2549): one JSON-RPC request per
 * POST, no session, the version and client capabilities in every request's `_meta`, headers that mirror the body
 * and must agree with it, `subscriptions/listen` in place of the GET stream.
 */
export class StatelessHttp {
  readonly #o: StatelessHttpOptions;
  readonly #running: PerClientSlots;
  readonly #listening: PerClientSlots;

  constructor(options: StatelessHttpOptions) {
    this.#o = options;
    this.#running = new PerClientSlots(options.maxConcurrentPerClient);
    this.#listening = new PerClientSlots(options.maxListenStreamsPerClient);
  }

  /** A POST whose `MCP-Protocol-Version` names the stateless revision, or an unknown one with `Mcp-Method`. */
  async handle(http: HttpRequestView, subject: Subject, version: string): Promise<HttpReply> {
    const post = readJsonPost(http);
    if (!('parsed' in post)) return post;
    const { wantsJson, wantsSse, parsed } = post;
    if (Array.isArray(parsed)) {
      return errorReply(
        400,
        ErrorCode.InvalidRequest,
        'Invalid Request: JSON-RPC batches are not part of protocol revision 2026-07-28',
      );
    }
    const message = classify(parsed);
    if (message.kind === 'invalid' || message.kind === 'response') {
      const reason =
        message.kind === 'invalid' ? message.reason : 'a client sends no responses in 2026-07-28';
      return errorReply(400, ErrorCode.InvalidRequest, `Invalid Request: ${reason}`, { id: message.id });
    }
    const request: StatelessRequest = {
      http,
      message,
      version,
      id: message.kind === 'request' ? message.id : null,
      parameterHeaders: this.#o.parameterHeaders,
    };
    for (const check of checks) {
      const refusal = check(request);
      if (refusal) return refusal;
    }
    // No client notification is defined over HTTP in this revision; one that comes is accepted and ignored.
    if (message.kind === 'notification') return { status: 202, headers: {} };

    const ctx = this.#o.context(findRevision(version)!, subject, undefined);
    const sse = wantsSse && (!wantsJson || this.#o.responseMode === 'sse');
    if (message.method === 'subscriptions/listen') {
      if (!wantsSse) {
        return errorReply(
          406,
          ErrorCodes.Transport,
          'Not Acceptable: subscriptions/listen answers with text/event-stream',
          { id: message.id },
        );
      }
      return this.#listen(message, subject);
    }
    if (!this.#o.dispatcher.knows(message.method, ctx)) {
      return errorReply(404, ErrorCode.MethodNotFound, `Method not found: ${message.method}`, {
        id: message.id,
      });
    }
    const missing = this.#o.dispatcher.missingScopes([message], ctx);
    if (missing.length > 0) return insufficientScope(missing, message.id);
    const release = this.#running.take(subject);
    if (!release) return tooManyRunning('client', this.#running.limit, message.id);
    // As in the session era: a call that may notify before its answer is streamed when the client accepts SSE.
    const stream =
      sse || (wantsSse && this.#o.dispatcher.streams([message], ctx))
        ? new SseStream(this.#o.keepAliveMs ?? 25_000)
        : undefined;
    const requestCtx: MethodContext = stream
      ? { ...ctx, notify: (method, params) => stream.send(notificationMessage(method, params)) }
      : ctx;
    const pending = this.#o.dispatcher
      .request(message, requestCtx)
      .then((response) => this.#envelope(response));
    void pending.finally(release);
    if (!stream) return jsonReply(200, await pending);
    void pending.then((response) => stream.send(response)).finally(() => stream.close());
    return { status: 200, headers: SSE_HEADERS, body: stream.body, onClientClose: () => stream.close() };
  }

  /** Every result says it is complete and who answered (SEP-2322 `resultType`, spec PR #3002 `serverInfo`). */
  #envelope(response: OutboundMessage): OutboundMessage {
    if (!('result' in response)) return response;
    const result = response.result as Record<string, unknown>;
    const meta = isObject(result._meta) ? result._meta : {};
    return resultMessage(response.id, {
      ...result,
      resultType: 'complete',
      _meta: { ...meta, [MetaKey.serverInfo]: { ...this.#o.serverInfo } },
    });
  }

  /**
   * `subscriptions/listen`: an SSE stream that opens with `notifications/subscriptions/acknowledged` naming what
   * will be sent (only `toolsListChanged` exists here), then carries each `notifications/tools/list_changed`, tagged
   * with the request's id as subscription id, until the client leaves or the server stops.
   */
  async #listen(message: JsonRpcRequest, subject: Subject): Promise<HttpReply> {
    const requested = message.params.notifications;
    if (!isObject(requested)) {
      return errorReply(
        400,
        ErrorCode.InvalidParams,
        'Invalid params: subscriptions/listen needs a "notifications" object',
        { id: message.id },
      );
    }
    const release = this.#listening.take(subject);
    if (!release) return tooManyListening(this.#listening.limit, message.id);
    const honored = requested.toolsListChanged === true ? { toolsListChanged: true } : {};
    const tag = { [MetaKey.subscriptionId]: message.id };
    const stream = new SseStream(this.#o.keepAliveMs ?? 25_000);
    stream.onClose(release);
    try {
      await this.#o.hub.follow(stream, {
        opened: () =>
          stream.send(
            notificationMessage('notifications/subscriptions/acknowledged', {
              notifications: honored,
              _meta: tag,
            }),
          ),
        deliver: (method) => {
          if (method === 'notifications/tools/list_changed' && 'toolsListChanged' in honored) {
            stream.send(notificationMessage(method, { _meta: tag }));
          }
        },
        finish: () =>
          stream.send(
            resultMessage(message.id, {
              resultType: 'complete',
              _meta: { ...tag, [MetaKey.serverInfo]: { ...this.#o.serverInfo } },
            }),
          ),
      });
    } catch (error) {
      stream.close();
      throw error;
    }
    return { status: 200, headers: SSE_HEADERS, body: stream.body, onClientClose: () => stream.close() };
  }
}
