import { McpError } from '../protocol/jsonrpc.js';

/** The server-error code of our upstream failures (JSON-RPC's implementation-defined range). */
export const UpstreamErrorCode = -32000;

/**
 * What went wrong with an upstream request, as the connection reports it (connection.ts turns the SDK's errors into
 * this, so the SDK is loaded only with the first upstream connection): the server's own JSON-RPC error, no answer in
 * time, an HTTP status, a missing authorization, or no server.
 */
export type UpstreamFailureKind =
  | { readonly kind: 'rpc'; readonly code: number; readonly message: string; readonly data?: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'http'; readonly status: number }
  | { readonly kind: 'unreachable' };

export class UpstreamFailure extends Error {
  constructor(
    readonly failure: UpstreamFailureKind,
    options?: ErrorOptions,
  ) {
    super(failure.kind === 'rpc' ? failure.message : `upstream ${failure.kind}`, options);
    this.name = 'UpstreamFailure';
  }
}

/**
 * An upstream failure as the JSON-RPC error the client gets, naming the server. The upstream's own JSON-RPC errors
 * keep their code and message; HTTP failures say their status. A 401 is the upstream asking for authorization the
 * gateway does not hold: its challenge (`WWW-Authenticate`, its body) is never relayed, since the client would take
 * it for ours and try to authorize against the upstream's server with a token meant for us.
 */
export function upstreamError(serverName: string, error: unknown): McpError {
  const server = `MCP server "${serverName}"`;
  if (error instanceof McpError) return error;
  const failure: UpstreamFailureKind =
    error instanceof UpstreamFailure ? error.failure : { kind: 'unreachable' };
  switch (failure.kind) {
    case 'rpc':
      return new McpError(failure.code, `${server}: ${stripSdkPrefix(failure.message)}`, {
        server: serverName,
        ...(failure.data === undefined ? {} : { upstream: failure.data }),
      });
    case 'timeout':
      return new McpError(UpstreamErrorCode, `${server} did not answer in time`, { server: serverName });
    case 'http':
      if (authStatus(failure.status))
        return new McpError(
          UpstreamErrorCode,
          `${server} asks for authorization the gateway does not have for it (HTTP ${failure.status}); ` +
            'its credential is configured on the gateway (see docs/oauth-and-mcp.md), not by this client',
          { server: serverName, status: failure.status },
        );
      if (failure.status === 429)
        return new McpError(UpstreamErrorCode, `${server}: too many requests (HTTP 429), try again later`, {
          server: serverName,
          status: 429,
        });
      return new McpError(UpstreamErrorCode, `${server} failed (HTTP ${failure.status})`, {
        server: serverName,
        status: failure.status,
      });
    case 'unreachable':
      return new McpError(UpstreamErrorCode, `${server} cannot be reached`, { server: serverName });
  }
}

/** 401 only: a 403 is as likely the gateway's own policy (ip-filter) as the upstream's, and says no more. */
function authStatus(status: number | undefined): boolean {
  return status === 401;
}

/** The SDK prefixes its errors with `MCP error <code>: `; the code travels in the error already. */
function stripSdkPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+: /, '');
}
