import type { Logger } from '../../log.js';
import type { ToolRegistry } from '../tools/registry.js';
import type { GatewayCaller, ServerInfo, Subject } from '../types.js';
import type { UpstreamTools } from '../upstream/aggregator.js';
import type { Params, RequestId } from './jsonrpc.js';
import type { Revision } from './revisions.js';

/** What a method may touch of the session it runs in (none in the stateless revision). */
export interface SessionView {
  readonly id: string;
  readonly initialized: boolean;
  /** Records `notifications/initialized` in the session store (shared by every process serving the session). */
  markInitialized(): Promise<void>;
}

/** Everything a method handler sees: no HTTP, no Koa. */
export interface MethodContext {
  readonly revision: Revision;
  readonly subject: Subject;
  readonly session: SessionView | undefined;
  readonly tools: ToolRegistry;
  readonly caller: GatewayCaller;
  /** The JSON-RPC id of the request being handled (none for a notification). */
  readonly requestId?: RequestId | undefined;
  /**
   * Sends a notification about the request being handled on its own response stream (progress, log messages of an
   * upstream call), ahead of its answer; undefined when the answer goes out as plain JSON (nothing can precede it).
   */
  readonly notify?: ((method: string, params: Record<string, unknown>) => void) | undefined;
  /** The tools of the upstream MCP servers (APIs of type `mcp`), when the catalog has any. */
  readonly upstream?: UpstreamTools | undefined;
  readonly serverInfo: ServerInfo;
  readonly instructions: string | undefined;
  /** How many tools one `tools/list` page holds. */
  readonly pageSize: number;
  readonly logger: Logger;
}

/** Which protocol era a method belongs to: `initialize`-based sessions or the stateless 2026 revision. */
export type Era = 'session' | 'stateless';

/**
 * One MCP method: the file name is the method name (`tools/call` → `methods/tools-call.ts`). A request's
 * handler returns its result or throws `McpError`; a notification's return value is ignored.
 */
export interface McpMethod {
  readonly name: string;
  readonly kind: 'request' | 'notification';
  readonly eras: readonly Era[];
  /**
   * Scopes the token lacks for this call, checked before any method runs so the HTTP layer can answer
   * 403 `insufficient_scope` (the client then steps up). Empty when the call is allowed.
   */
  missingScopes?(params: Params, ctx: MethodContext): readonly string[];
  /**
   * Whether this call may send notifications before its answer (progress, upstream log messages): the transport then
   * answers in SSE when the client accepts it, whatever `mcp.responseMode` says.
   */
  streams?(params: Params, ctx: MethodContext): boolean;
  handle(params: Params, ctx: MethodContext): unknown;
}
