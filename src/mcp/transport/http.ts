import type { Readable } from 'node:stream';
import { ErrorCode, errorMessage, type OutboundMessage, type RequestId } from '../protocol/jsonrpc.js';

/** The parts of an HTTP request the transport reads; the framework adapter fills it. */
export interface HttpRequestView {
  readonly method: string;
  /** A header by lower-case name; repeated headers joined with ", ". */
  header(name: string): string | undefined;
  readonly body?: Buffer;
}

/** What the transport answers; the framework adapter writes it. */
export interface HttpReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Readable;
  /** Set on a 403 for a token that lacks these scopes: the auth layer adds the `insufficient_scope` challenge. */
  readonly insufficientScopes?: readonly string[];
  /** Called once when the client disconnects while a streamed body is still open. */
  readonly onClientClose?: () => void;
}

/** JSON-RPC's "server error" range: used for refusals made by the transport itself, as the SDK does. */
export const TransportErrorCode = -32000;

export function jsonReply(status: number, body: unknown, headers: Record<string, string> = {}): HttpReply {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** An HTTP-level refusal with an id-less (or id-echoing) JSON-RPC error body, as the transport spec allows. */
export function errorReply(
  status: number,
  code: number,
  message: string,
  options: { id?: RequestId | null; data?: unknown; headers?: Record<string, string> } = {},
): HttpReply {
  const body: OutboundMessage = errorMessage(options.id ?? null, code, message, options.data);
  return jsonReply(status, body, options.headers);
}

export const ErrorCodes = { ...ErrorCode, Transport: TransportErrorCode } as const;

/** True when an `Accept` header admits `type` (absent header, wildcards and parameters handled). */
export function accepts(accept: string | undefined, type: string): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  const [major] = type.split('/');
  return accept.split(',').some((part) => {
    const range = part.split(';')[0]!.trim().toLowerCase();
    const q = /;\s*q=([0-9.]+)/.exec(part);
    if (q && Number(q[1]) === 0) return false;
    return range === type || range === '*/*' || range === `${major}/*`;
  });
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type === 'application/json' || type.endsWith('+json');
}

/** A POST the endpoint can read: which answers its client takes, and its body parsed as JSON. */
export interface JsonPost {
  readonly wantsJson: boolean;
  readonly wantsSse: boolean;
  readonly parsed: unknown;
}

/**
 * The checks every revision makes of a POST before reading its messages: an `Accept` that admits JSON or an event
 * stream (lenient on purpose: clients and proxies that list only one of the two are served in that one), a JSON
 * `Content-Type`, and a body that parses. The refusal, when it is one.
 */
export function readJsonPost(request: HttpRequestView): JsonPost | HttpReply {
  const accept = request.header('accept');
  const wantsJson = accepts(accept, 'application/json');
  const wantsSse = accepts(accept, 'text/event-stream');
  if (!wantsJson && !wantsSse)
    return errorReply(
      406,
      ErrorCodes.Transport,
      'Not Acceptable: accept application/json or text/event-stream',
    );
  if (!isJsonContentType(request.header('content-type')))
    return errorReply(
      415,
      ErrorCodes.Transport,
      'Unsupported Media Type: Content-Type must be application/json',
    );
  try {
    return { wantsJson, wantsSse, parsed: JSON.parse((request.body ?? Buffer.alloc(0)).toString('utf8')) };
  } catch {
    return errorReply(400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
  }
}
