/**
 * The HTTP refusals both protocol eras make, worded once: a call the token's scopes do not cover (403), a session or
 * client over its bound (429), a method or a protocol version not served. Each says what rule failed and what was
 * found.
 */
import { ErrorCode, type RequestId } from '../protocol/jsonrpc.js';
import { ErrorCodes, errorReply, type HttpReply } from './http.js';

/** 403 for requests the token's scopes do not grant: the auth layer adds the `insufficient_scope` challenge. */
export function insufficientScope(missing: readonly string[], id: RequestId | null): HttpReply {
  const refusal = errorReply(
    403,
    ErrorCodes.Transport,
    `Forbidden: the access token lacks scope ${missing.join(' ')}`,
    { id },
  );
  return { ...refusal, insufficientScopes: missing };
}

/**
 * 429 when a session (over every process) or a client (stateless, in this process) already has `max` requests
 * running; the client may retry once one has answered.
 */
export function tooManyRunning(
  holder: 'session' | 'client',
  max: number,
  id: RequestId | null,
  headers: Record<string, string> = {},
): HttpReply {
  return errorReply(
    429,
    ErrorCodes.Transport,
    `Too Many Requests: this ${holder} already has ${max} requests running (mcp.maxConcurrentRequestsPerSession); retry when one has answered`,
    { id, headers: { 'retry-after': '1', ...headers } },
  );
}

/** 429 when a client already holds `max` `subscriptions/listen` streams in this process. */
export function tooManyListening(max: number, id: RequestId): HttpReply {
  return errorReply(
    429,
    ErrorCodes.Transport,
    `Too Many Requests: this client already has ${max} subscriptions/listen streams open`,
    { id, headers: { 'retry-after': '1' } },
  );
}

/** 405 for an HTTP method the era does not serve, with the ones it does in `Allow`. */
export function methodNotAllowed(method: string, allow: string): HttpReply {
  return errorReply(405, ErrorCodes.Transport, `Method not allowed: ${method}`, { headers: { allow } });
}

/** -32022 for a protocol version not served, naming those that are: the client picks one and retries. */
export function unsupportedVersion(
  requested: string | undefined,
  supported: readonly string[],
  id: RequestId | null = null,
): HttpReply {
  return errorReply(400, ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', {
    id,
    data: { supported, requested },
  });
}
