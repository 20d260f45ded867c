import type { Tool } from '@modelcontextprotocol/client';
import type { Subject } from '../types.js';

/**
 * One remote MCP server (an API of type `mcp`) as the aggregated endpoint sees it. The service builds these from the
 * configuration; the endpoint never reads the configuration itself.
 */
export interface UpstreamServer {
  readonly apiId: string;
  /** Shown in errors: `MCP server "<name>"`. */
  readonly name: string;
  /** Tool names in `/v1/mcp` are `<prefix>__<upstream tool name>`. */
  readonly prefix: string;
  /** Products the API is in: `read:`/`write:<product>-work` grant its tools. */
  readonly productIds: readonly string[];
  /** Whether an upstream tool is shown at all (one not shown is neither listed nor callable). */
  readonly exposes: (toolName: string) => boolean;
  /** Whether calling the tool needs `write:<product>-work` (else `read:`). */
  readonly needsWrite: (tool: Tool) => boolean;
}

export interface UpstreamCatalog {
  servers(): readonly UpstreamServer[];
  /** Calls `listener` after the servers changed (a reload); returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
}

/** What a client of one upstream server needs: where to send, and a fetch that carries the caller's credential. */
export interface UpstreamRoute {
  readonly url: URL;
  readonly fetch: typeof fetch;
}

/**
 * Where the connections to an upstream server go for one caller: through the gateway, so the MCP API's policies
 * apply, with a credential minted for the caller (never the caller's own token).
 */
export type UpstreamRouter = (server: UpstreamServer, subject: Subject) => UpstreamRoute;

/**
 * An upstream session as any service process can continue it (kept with the downstream session in a shared session
 * store): the server's session id, the revision negotiated, and whether the server offers logging.
 */
export interface SavedUpstreamSession {
  readonly sessionId: string;
  readonly protocolVersion: string;
  readonly logging: boolean;
}
