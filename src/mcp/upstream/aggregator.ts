import type { CallToolResult, LoggingLevel, Tool } from '@modelcontextprotocol/client';
import type { Logger } from '../../log.js';
import { ErrorCode, McpError } from '../protocol/jsonrpc.js';
import { productScope } from '../tools/registry.js';
import type { LoggedNotification, SessionAttachments, StreamLeases } from '../transport/session-store.js';
import type { Subject } from '../types.js';
import { UpstreamErrorCode, upstreamError } from './errors.js';
import { UpstreamSessions } from './sessions.js';
import type { UpstreamCatalog, UpstreamRouter, UpstreamServer } from './types.js';

/** Between a server's prefix and its tool's name in `/v1/mcp`: `weather__get_forecast`. */
export const PREFIX_SEPARATOR = '__';

/** An upstream tool as `/v1/mcp` lists it. */
export interface AggregatedTool {
  readonly name: string;
  readonly definition: Tool;
}

export interface UpstreamToolsOptions {
  readonly catalog: UpstreamCatalog;
  readonly router: UpstreamRouter;
  /** Per upstream request (default 30 s). */
  readonly timeoutMs?: number;
  /** Upstream sessions unused this long end (default 30 min). */
  readonly idleMs?: number;
  /** Where upstream sessions are kept with their downstream session when processes share sessions. */
  readonly attachments?: SessionAttachments | undefined;
  /** With `attachments`: which process holds each upstream session's GET stream. */
  readonly streamLeases?: StreamLeases | undefined;
  /** How what the upstreams say reaches the downstream sessions, and cancellations the process running a call. */
  readonly bus?: DownstreamBus | undefined;
  /** An upstream's tool list changed, or the servers did: the endpoint tells its clients. */
  readonly onToolsChanged: (reason: string) => void;
  readonly logger: Logger;
}

/**
 * The endpoint's notification hub as the upstream side uses it: what reaches a downstream session's GET stream on
 * whichever process holds it, and what one process tells the others about a downstream session.
 */
export interface DownstreamBus {
  sendTo(to: string, method: string, params?: Record<string, unknown>): Promise<void>;
  tellService(to: string, method: string, params: Record<string, unknown>): Promise<void>;
  watch(to: string, handler: (entry: LoggedNotification) => void): () => void;
}

/** Who is asking, and which downstream session (or stateless owner) the upstream sessions belong to. */
export interface UpstreamCaller {
  readonly subject: Subject;
  readonly downstream: string;
}

/** An upstream's `notifications/progress` without its token (the client's own is put back). */
export interface UpstreamProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** What a running upstream call hands back to its client before the answer, and how the client names the call. */
export interface UpstreamCallRelay {
  /** The client's JSON-RPC id: what its `notifications/cancelled` names. */
  readonly requestId?: string | number | undefined;
  /** Set when the client asked for progress and its answer streams. */
  readonly onProgress?: (progress: UpstreamProgress) => void;
  /** Set when the answer streams: the upstream's `notifications/message` while the call runs. */
  readonly onLog?: (params: Record<string, unknown>) => void;
}

/**
 * The tools of every upstream MCP server, beside the REST-API tools of `/v1/mcp`: listed from the servers the token's
 * scopes reach, filtered by each API's `mcp.tools`, named `<prefix>__<tool>`, and called on the owning server in the
 * caller's own upstream session.
 */
export class UpstreamTools {
  readonly #sessions: UpstreamSessions;
  /** Upstream calls running, by downstream key and the client's request id: what `notifications/cancelled` stops. */
  readonly #running = new Map<string, AbortController>();
  #byPrefix = new Map<string, UpstreamServer>();
  readonly #unsubscribe: () => void;

  constructor(private readonly options: UpstreamToolsOptions) {
    this.#sessions = new UpstreamSessions({
      router: options.router,
      timeoutMs: options.timeoutMs ?? 30_000,
      idleMs: options.idleMs ?? 30 * 60_000,
      onToolsChanged: (server) => options.onToolsChanged(`upstream ${server.apiId}`),
      attachments: options.attachments,
      streamLeases: options.streamLeases,
      servers: () => options.catalog.servers(),
      onNotification: (downstream, method, params) => this.#notify(downstream, method, params),
      logger: options.logger,
    });
    this.#index();
    this.#unsubscribe = options.catalog.onChange(() => {
      this.#index();
      this.#sessions.keepOnly(options.catalog.servers());
      options.onToolsChanged('configuration');
    });
  }

  /** Open upstream sessions of this process. */
  get sessions(): number {
    return this.#sessions.size;
  }

  /** Whether `name` is an upstream tool's name (by its prefix), whatever the caller may do with it. */
  owns(name: string): boolean {
    return this.#split(name) !== undefined;
  }

  /** Every scope an upstream tool could need: what the protected resource metadata adds to the REST tools'. */
  scopes(): string[] {
    return this.options.catalog
      .servers()
      .flatMap((s) => s.productIds.flatMap((p) => [productScope(p, true), productScope(p, false)]));
  }

  /**
   * The upstream tools the caller may call. A server that fails is left out of the list (logged), so one broken
   * upstream does not take every other tool away; calling one of its tools gives the error naming it.
   */
  async list(caller: UpstreamCaller): Promise<AggregatedTool[]> {
    const reachable = this.options.catalog
      .servers()
      .filter((server) => grantingScopes(server).some((s) => caller.subject.scopes.includes(s)));
    const lists = await Promise.all(
      reachable.map(async (server) => {
        try {
          const tools = await (await this.#connection(caller, server)).tools();
          return tools
            .filter((tool) => server.exposes(tool.name) && isGranted(server, tool, caller.subject))
            .map((tool) => ({
              name: `${server.prefix}${PREFIX_SEPARATOR}${tool.name}`,
              definition: { ...tool, name: `${server.prefix}${PREFIX_SEPARATOR}${tool.name}` },
            }));
        } catch (error) {
          this.options.logger.warn(`mcp: tools/list of MCP server "${server.name}" failed`, {
            api: server.apiId,
            reason: upstreamError(server.name, error).message,
          });
          return [];
        }
      }),
    );
    return lists.flat();
  }

  /**
   * The scope a call lacks, when the tool is already known to this caller's upstream session (no request is made
   * here): lets the transport answer 403 `insufficient_scope` so the client can step up.
   */
  missingScope(
    name: string,
    caller: UpstreamCaller,
    cachedTools: (server: UpstreamServer) => readonly Tool[] | undefined,
  ): string | undefined {
    const split = this.#split(name);
    if (!split) return undefined;
    const tool = cachedTools(split.server)?.find((t) => t.name === split.tool);
    if (!tool || !split.server.exposes(tool.name) || isGranted(split.server, tool, caller.subject))
      return undefined;
    return productScope([...split.server.productIds].sort()[0]!, !split.server.needsWrite(tool));
  }

  /**
   * Calls the tool on its server. A tool the API does not expose, or the caller's scopes do not grant, is an unknown
   * tool (-32602), exactly as one that does not exist; an upstream failure is a JSON-RPC error naming the server.
   */
  async call(
    name: string,
    args: Record<string, unknown>,
    caller: UpstreamCaller,
    relay: UpstreamCallRelay = {},
  ): Promise<CallToolResult> {
    const split = this.#split(name);
    if (!split?.server.exposes(split.tool)) throw unknownTool(name);
    const { server, tool: toolName } = split;
    if (!grantingScopes(server).some((s) => caller.subject.scopes.includes(s))) throw unknownTool(name);
    try {
      const connection = await this.#connection(caller, server);
      const tool = (await connection.tools()).find((t) => t.name === toolName);
      if (!tool || !isGranted(server, tool, caller.subject)) throw unknownTool(name);
      const running = relay.requestId === undefined ? undefined : runningKey(caller, relay.requestId);
      const controller = new AbortController();
      if (running) this.#running.set(running, controller);
      // The client's cancellation may reach another process: that one logs it for this one.
      const unwatch =
        running && this.options.attachments
          ? this.options.bus?.watch(caller.downstream, (entry) => {
              if (entry.method === CANCELLED && entry.params?.requestId === relay.requestId)
                controller.abort('cancelled by the client');
            })
          : undefined;
      try {
        return await connection.callTool(toolName, args, {
          signal: controller.signal,
          ...(relay.onProgress ? { onProgress: relay.onProgress } : {}),
          ...(relay.onLog ? { onLog: relay.onLog } : {}),
        });
      } catch (error) {
        if (controller.signal.aborted)
          throw new McpError(UpstreamErrorCode, `MCP server "${server.name}": the call was cancelled`, {
            server: server.name,
          });
        throw error;
      } finally {
        unwatch?.();
        if (running && this.#running.get(running) === controller) this.#running.delete(running);
      }
    } catch (error) {
      throw error instanceof McpError ? error : upstreamError(server.name, error);
    }
  }

  /** The tools of a server this caller's upstream session has read (for the synchronous scope check). */
  cachedTools(caller: UpstreamCaller): (server: UpstreamServer) => readonly Tool[] | undefined {
    return (server) => this.#sessions.peek(caller.downstream, server)?.cachedTools();
  }

  /**
   * The client cancelled its request: the upstream call is aborted (the SDK client tells the server). A call this
   * process does not run may run on another one sharing the sessions: the cancellation is logged for it.
   */
  async cancel(caller: UpstreamCaller, requestId: string | number): Promise<void> {
    const running = this.#running.get(runningKey(caller, requestId));
    if (running) return running.abort('cancelled by the client');
    if (this.options.attachments && this.options.bus)
      await this.options.bus
        .tellService(caller.downstream, CANCELLED, { requestId })
        .catch((error: unknown) =>
          this.options.logger.warn('mcp: passing a cancellation to the other service processes failed', {
            reason: (error as Error).message,
          }),
        );
  }

  /**
   * A server's log message outside any call that streams: to the downstream session's GET stream, whichever process
   * holds it. A stateless (2026-07-28) caller has no such stream: its messages outside a call are dropped.
   */
  #notify(downstream: string, method: string, params: Record<string, unknown>): void {
    if (!downstream.startsWith('session:') || !this.options.bus) return;
    this.options.bus.sendTo(downstream, method, params).catch((error: unknown) =>
      this.options.logger.warn(`mcp: relaying an upstream ${method} failed`, {
        reason: (error as Error).message,
      }),
    );
  }

  /**
   * The client's `logging/setLevel`: sent to its open upstream sessions that offer logging, and to each one it opens
   * later. A server that fails to take it is logged, not the client's error: the others took it.
   */
  async setLogLevel(caller: UpstreamCaller, level: LoggingLevel): Promise<void> {
    this.#sessions.setLogLevel(caller.downstream, level);
    await Promise.all(
      this.#sessions.openOf(caller.downstream).map(({ server, connection }) =>
        connection.setLogLevel(level).catch((error: unknown) =>
          this.options.logger.warn(`mcp: logging/setLevel on MCP server "${server.name}" failed`, {
            api: server.apiId,
            reason: upstreamError(server.name, error).message,
          }),
        ),
      ),
    );
  }

  /**
   * The downstream session ends: so do its upstream sessions, on whichever process opened them. Resolves once what
   * the session store holds of them is read (the caller then deletes the session).
   */
  endSession(downstream: string, subject: Subject): Promise<void> {
    return this.#sessions.endDownstream(downstream, subject, this.options.catalog.servers());
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    await this.#sessions.close();
  }

  #connection(caller: UpstreamCaller, server: UpstreamServer) {
    return this.#sessions.connection(caller.downstream, server, caller.subject);
  }

  #index(): void {
    this.#byPrefix = new Map(this.options.catalog.servers().map((s) => [s.prefix, s]));
  }

  #split(name: string): { server: UpstreamServer; tool: string } | undefined {
    const at = name.indexOf(PREFIX_SEPARATOR);
    if (at <= 0) return undefined;
    const server = this.#byPrefix.get(name.slice(0, at));
    const tool = name.slice(at + PREFIX_SEPARATOR.length);
    return server && tool !== '' ? { server, tool } : undefined;
  }
}

const CANCELLED = 'notifications/cancelled';

function runningKey(caller: UpstreamCaller, requestId: string | number): string {
  return `${caller.downstream}\n${typeof requestId}:${requestId}`;
}

function grantingScopes(server: UpstreamServer): string[] {
  return server.productIds.flatMap((p) => [productScope(p, true), productScope(p, false)]);
}

/** As for the REST tools: `read:` grants the read-only tools, `write:` the others (write does not imply read). */
function isGranted(server: UpstreamServer, tool: Tool, subject: Subject): boolean {
  const readOnly = !server.needsWrite(tool);
  return server.productIds.some((p) => subject.scopes.includes(productScope(p, readOnly)));
}

function unknownTool(name: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
}
