/**
 * JSON-RPC 2.0 envelopes: classifying what a client sent and shaping what we answer. Knows nothing of HTTP.
 */

export type RequestId = string | number;
export type Params = Readonly<Record<string, unknown>>;

export interface JsonRpcRequest {
  readonly kind: 'request';
  readonly id: RequestId;
  readonly method: string;
  readonly params: Params;
}

export interface JsonRpcNotification {
  readonly kind: 'notification';
  readonly method: string;
  readonly params: Params;
}

/** A response from the client (to a server request). We send none, so these are accepted and dropped. */
export interface JsonRpcClientResponse {
  readonly kind: 'response';
  readonly id: RequestId;
}

/** Not a JSON-RPC 2.0 message; `id` is echoed when one could be read (else null, per JSON-RPC §5). */
export interface InvalidMessage {
  readonly kind: 'invalid';
  readonly id: RequestId | null;
  readonly reason: string;
}

export type InboundMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcClientResponse | InvalidMessage;

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Used by the official SDK for an unknown or terminated session; kept for interop. */
  SessionNotFound: -32001,
  /** 2026-07-28: a header disagrees with the body. */
  HeaderMismatch: -32020,
  /** 2026-07-28: `MCP-Protocol-Version` names a revision the server does not speak. */
  UnsupportedProtocolVersion: -32022,
} as const;

/** A JSON-RPC error a method handler throws on purpose; its message is safe to show to the client. */
export class McpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

export interface JsonRpcErrorBody {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export type OutboundMessage =
  | { readonly jsonrpc: '2.0'; readonly id: RequestId; readonly result: unknown }
  | { readonly jsonrpc: '2.0'; readonly id: RequestId | null; readonly error: JsonRpcErrorBody }
  | { readonly jsonrpc: '2.0'; readonly method: string; readonly params?: unknown };

export function resultMessage(id: RequestId, result: unknown): OutboundMessage {
  return { jsonrpc: '2.0', id, result };
}

export function errorMessage(
  id: RequestId | null,
  code: number,
  message: string,
  data?: unknown,
): OutboundMessage {
  const error: JsonRpcErrorBody = data === undefined ? { code, message } : { code, message, data };
  return { jsonrpc: '2.0', id, error };
}

export function notificationMessage(method: string, params?: unknown): OutboundMessage {
  return params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readId(value: unknown): RequestId | null | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (value === null) return null;
  return undefined;
}

/** Classifies one parsed JSON value as a JSON-RPC message. */
export function classify(value: unknown): InboundMessage {
  if (!isObject(value)) return { kind: 'invalid', id: null, reason: 'a JSON-RPC message must be an object' };
  const id = readId(value.id);
  const echoId = id ?? null;
  if (value.jsonrpc !== '2.0') {
    return {
      kind: 'invalid',
      id: echoId,
      reason: `"jsonrpc" must be "2.0", got ${JSON.stringify(value.jsonrpc)}`,
    };
  }
  if ('id' in value && id === undefined) {
    return { kind: 'invalid', id: null, reason: '"id" must be a string or a number' };
  }
  if (typeof value.method === 'string') {
    if (value.params !== undefined && !isObject(value.params)) {
      return { kind: 'invalid', id: echoId, reason: '"params" must be an object' };
    }
    const params = (value.params as Params | undefined) ?? {};
    if (!('id' in value)) return { kind: 'notification', method: value.method, params };
    // MCP forbids null ids on requests (unlike plain JSON-RPC), so a null id is not a request.
    if (id === null || id === undefined) {
      return { kind: 'invalid', id: null, reason: 'a request "id" must be a string or a number, not null' };
    }
    return { kind: 'request', id, method: value.method, params };
  }
  if ('method' in value) return { kind: 'invalid', id: echoId, reason: '"method" must be a string' };
  if (('result' in value || 'error' in value) && id !== undefined && id !== null) {
    return { kind: 'response', id };
  }
  return { kind: 'invalid', id: echoId, reason: 'neither a request, a notification nor a response' };
}
