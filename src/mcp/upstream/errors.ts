import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { McpError } from '../protocol/jsonrpc.js';

/** The server-error code of our upstream failures (JSON-RPC's implementation-defined range). */
export const UpstreamErrorCode = -32000;

/**
 * An upstream failure as the JSON-RPC error the client gets, naming the server. The upstream's own JSON-RPC errors
 * keep their code and message; HTTP failures say their status. A 401 is the upstream asking for authorization the
 * gateway does not hold: its challenge (`WWW-Authenticate`, its body) is never relayed, since the client would take
 * it for ours and try to authorize against the upstream's server with a token meant for us.
 */
export function upstreamError(serverName: string, error: unknown): McpError {
  const server = `MCP server "${serverName}"`;
  if (error instanceof ProtocolError)
    return new McpError(error.code, `${server}: ${stripSdkPrefix(error.message)}`, {
      server: serverName,
      ...(error.data === undefined ? {} : { upstream: error.data }),
    });
  if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
    return new McpError(UpstreamErrorCode, `${server} did not answer in time`, { server: serverName });
  // The SDK's version probe says an HTTP failure in an SdkError of its own, with the status in `data`.
  const status = error instanceof SdkHttpError ? error.status : httpStatusOf(error);
  if (error instanceof UnauthorizedError || authStatus(status))
    return new McpError(
      UpstreamErrorCode,
      `${server} asks for authorization the gateway does not have for it (HTTP ${status ?? 401}); ` +
        'its credential is configured on the gateway (see docs/oauth-and-mcp.md), not by this client',
      { server: serverName, status: status ?? 401 },
    );
  if (status === 429)
    return new McpError(UpstreamErrorCode, `${server}: too many requests (HTTP 429), try again later`, {
      server: serverName,
      status: 429,
    });
  if (status !== undefined && status > 0)
    return new McpError(UpstreamErrorCode, `${server} failed (HTTP ${status})`, {
      server: serverName,
      status,
    });
  if (error instanceof McpError) return error;
  return new McpError(UpstreamErrorCode, `${server} cannot be reached`, { server: serverName });
}

function httpStatusOf(error: unknown): number | undefined {
  if (!(error instanceof SdkError)) return undefined;
  const status = (error.data as { status?: unknown } | undefined)?.status;
  return typeof status === 'number' ? status : undefined;
}

/** 401 only: a 403 is as likely the gateway's own policy (ip-filter) as the upstream's, and says no more. */
function authStatus(status: number | undefined): boolean {
  return status === 401;
}

/** The SDK prefixes its errors with `MCP error <code>: `; the code travels in the error already. */
function stripSdkPrefix(message: string): string {
  return message.replace(/^MCP error -?\d+: /, '');
}
