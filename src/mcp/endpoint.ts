import { createHash, randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { type Logger, processLogger } from '../log.js';
import { locateResource } from './auth/resource-metadata.js';
import { mcpKoaMiddleware } from './koa.js';
import { methodTable } from './methods/index.js';
import { Dispatcher } from './protocol/dispatcher.js';
import type { MethodContext } from './protocol/method.js';
import { servedRevisions } from './protocol/revisions.js';
import { ToolRegistry } from './tools/registry.js';
import { NotificationHub } from './transport/notification-hub.js';
import { StreamableHttpTransport } from './transport/router.js';
import { defaultMaxConcurrentPerSession, type ResponseMode, SessionHttp } from './transport/session-http.js';
import { type SessionStore, sessionKey } from './transport/session-store.js';
import { InProcessSessionStore, type SessionStoreOptions } from './transport/sessions.js';
import { StatelessHttp } from './transport/stateless-http.js';
import type { AccessTokenVerifier, GatewayCaller, ServerInfo, ToolCatalog } from './types.js';
import { UpstreamTools } from './upstream/aggregator.js';
import type { UpstreamCatalog, UpstreamRouter } from './upstream/types.js';

export interface McpEndpointOptions {
  /** Exactly the endpoint URL clients use, e.g. `https://host/v1/mcp`: the PRM `resource` and token audience. */
  readonly resourceUrl: string;
  /** The authorization server's issuer, string-identical to its metadata's `issuer`. */
  readonly issuer: string;
  readonly verifier: AccessTokenVerifier;
  readonly catalog: ToolCatalog;
  readonly caller: GatewayCaller;
  /** Browser origins allowed besides the endpoint's own; any other `Origin` is 403. */
  readonly allowedOrigins?: readonly string[];
  /**
   * When set, requests whose `Host` is not listed are 403 (DNS-rebinding protection for local use); an `Origin`
   * whose host[:port] is listed is accepted like the endpoint's own.
   */
  readonly allowedHosts?: readonly string[];
  readonly serverInfo: ServerInfo;
  readonly instructions?: string;
  /** Answer POSTs as SSE when the client accepts both (default `json`). */
  readonly responseMode?: ResponseMode;
  /** Tools per `tools/list` page (default 100). */
  readonly pageSize?: number;
  /** Most messages in one JSON-RPC batch (default 50); a bigger batch is refused whole. */
  readonly maxBatchSize?: number;
  /** Requests of one batch run at most this many at a time (default 4). */
  readonly batchConcurrency?: number;
  /**
   * POSTs with requests one session may have running at once, over every process (default 8). In the stateless
   * 2026-07-28 revision, which has no sessions, the same bound holds per client (`sub` + `client_id`) and process.
   */
  readonly maxConcurrentPerSession?: number;
  /** 2026-07-28 `subscriptions/listen` streams one client may hold open per process (default 4). */
  readonly maxListenStreamsPerClient?: number;
  /** Largest POST body accepted (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Bounds of the in-process session store (used when no `sessionStore` is given). */
  readonly sessions?: SessionStoreOptions;
  /**
   * Where sessions and the notification log live. Default: in this process. Several processes behind one Envoy
   * share one (the service gives the Redis store of `state.redis`); the endpoint closes it on `close()`.
   */
  readonly sessionStore?: SessionStore;
  /** How often open GET streams look for notifications other processes logged (default 1000 ms). */
  readonly notificationPollMs?: number;
  readonly keepAliveMs?: number;
  /** Where failures and refused tokens are logged (default: JSON lines on stderr). */
  readonly logger?: Logger;
  /**
   * The remote MCP servers (APIs of type `mcp`) whose tools are served beside the REST-API tools, and how to reach
   * them (through the gateway). Without it only REST-API tools are served.
   */
  readonly upstreams?: {
    readonly catalog: UpstreamCatalog;
    readonly router: UpstreamRouter;
    /** Per upstream request (default 30 s). */
    readonly timeoutMs?: number;
  };
}

export interface McpEndpoint {
  readonly middleware: Koa.Middleware;
  /** Live counts, for metrics and tests. */
  stats(): {
    /** Sessions held in this process's store; undefined for a shared store. */
    readonly sessions: number | undefined;
    readonly openStreams: number;
    readonly tools: number;
    /** Upstream MCP sessions this process holds. */
    readonly upstreamSessions: number;
  };
  /** Ends open streams, stops listening to the catalog and closes the session store. */
  close(): Promise<void>;
}

function checkOptions(o: McpEndpointOptions): void {
  if (typeof o.issuer !== 'string' || o.issuer === '')
    throw new TypeError('createMcpEndpoint: issuer is required');
  const pageSize = o.pageSize ?? 100;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new TypeError(`createMcpEndpoint: pageSize must be a positive integer, got ${o.pageSize}`);
  }
  for (const [name, value] of [
    ['maxBatchSize', o.maxBatchSize],
    ['batchConcurrency', o.batchConcurrency],
    ['maxConcurrentPerSession', o.maxConcurrentPerSession],
    ['notificationPollMs', o.notificationPollMs],
    ['maxListenStreamsPerClient', o.maxListenStreamsPerClient],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1))
      throw new TypeError(`createMcpEndpoint: ${name} must be a positive integer, got ${value}`);
  }
  for (const origin of o.allowedOrigins ?? []) {
    if (new URL(origin).origin !== origin) {
      throw new TypeError(
        `createMcpEndpoint: allowedOrigins entries must be bare origins, got ${JSON.stringify(origin)}`,
      );
    }
  }
}

/** Composes the MCP endpoint: tools from the catalog, JSON-RPC methods, Streamable HTTP, and the Koa adapter. */
export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  checkOptions(options);
  const location = locateResource(options.resourceUrl);
  const logger = options.logger ?? processLogger;
  const tools = new ToolRegistry(options.catalog, { warn: (m) => logger.warn(m) });
  const sessions: SessionStore = options.sessionStore ?? new InProcessSessionStore(options.sessions);
  const dispatcher = new Dispatcher(methodTable);
  const pageSize = options.pageSize ?? 100;
  const hub = new NotificationHub({
    log: sessions.notifications,
    ...(options.notificationPollMs !== undefined ? { pollMs: options.notificationPollMs } : {}),
    logger,
  });
  // Set below: an upstream's list change reaches every stream, as a configuration change does.
  let announce: (reason: string) => void = () => {};
  const upstream =
    options.upstreams &&
    new UpstreamTools({
      catalog: options.upstreams.catalog,
      router: options.upstreams.router,
      ...(options.upstreams.timeoutMs !== undefined ? { timeoutMs: options.upstreams.timeoutMs } : {}),
      onToolsChanged: (reason) => announce(reason),
      attachments: sessions.attachments,
      streamLeases: sessions.streamLeases,
      bus: hub,
      logger,
    });

  const context = (
    revision: MethodContext['revision'],
    subject: MethodContext['subject'],
    session: MethodContext['session'],
  ): MethodContext => ({
    revision,
    subject,
    session,
    tools,
    caller: options.caller,
    upstream,
    serverInfo: options.serverInfo,
    instructions: options.instructions,
    pageSize,
    logger,
  });

  const transport = new StreamableHttpTransport({
    sessionEra: new SessionHttp({
      dispatcher,
      sessions,
      hub,
      served: servedRevisions,
      context,
      responseMode: options.responseMode,
      keepAliveMs: options.keepAliveMs,
      ...(options.maxBatchSize !== undefined ? { maxBatchSize: options.maxBatchSize } : {}),
      ...(options.batchConcurrency !== undefined ? { batchConcurrency: options.batchConcurrency } : {}),
      ...(options.maxConcurrentPerSession !== undefined
        ? { maxConcurrentPerSession: options.maxConcurrentPerSession }
        : {}),
      ...(upstream
        ? {
            onSessionEnding: (id: string, subject: MethodContext['subject']) =>
              upstream.endSession(sessionKey(id), subject),
          }
        : {}),
    }),
    stateless: new StatelessHttp({
      dispatcher,
      hub,
      parameterHeaders: (toolName) => tools.find(toolName)?.mirrored ?? [],
      context,
      serverInfo: options.serverInfo,
      responseMode: options.responseMode,
      keepAliveMs: options.keepAliveMs,
      maxConcurrentPerClient: options.maxConcurrentPerSession ?? defaultMaxConcurrentPerSession,
      maxListenStreamsPerClient: options.maxListenStreamsPerClient ?? 4,
    }),
    logger,
  });
  // A reload that leaves the tools as they were announces nothing; one that changes them announces it once, however
  // many processes make the same change (the log keeps one entry per fingerprint in a row).
  let fingerprint = toolsFingerprint(tools);
  const stopBroadcast = tools.onChange(() => {
    const next = toolsFingerprint(tools);
    if (next === fingerprint) return;
    fingerprint = next;
    hub
      .broadcastToolListChanged(next)
      .catch((error: unknown) =>
        logger.warn('mcp: announcing tools/list_changed failed', { reason: (error as Error).message }),
      );
  });

  // Each upstream change is its own entry in the log (the servers' lists are not part of the fingerprint).
  announce = (reason) =>
    void hub
      .broadcastToolListChanged(`${reason}:${randomUUID()}`)
      .catch((error: unknown) =>
        logger.warn('mcp: announcing tools/list_changed failed', { reason: (error as Error).message }),
      );
  // The challenge's scope for a `tools/call` comes from the REST-API tool it names (scope-selection.ts); an upstream
  // server's tool is not in the registry, so its call is challenged with the read scopes and stepped up after.
  const scopes = {
    find: (name: string) => tools.find(name),
    scopesSupported: (): readonly string[] =>
      upstream
        ? [...new Set([...tools.scopesSupported(), ...upstream.scopes()])].sort()
        : tools.scopesSupported(),
  };

  const middleware = mcpKoaMiddleware({
    location,
    issuer: options.issuer,
    verifier: options.verifier,
    transport,
    tools: scopes,
    allowedOrigins: options.allowedOrigins ?? [],
    allowedHosts: options.allowedHosts,
    maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
    resourceName: options.serverInfo.title ?? options.serverInfo.name,
    logger,
  });

  return {
    middleware,
    stats: () => ({
      sessions: sessions.size,
      openStreams: hub.openStreams,
      tools: tools.entries().length,
      upstreamSessions: upstream?.sessions ?? 0,
    }),
    async close() {
      stopBroadcast();
      tools.close();
      hub.close();
      await upstream?.close();
      await sessions.close();
    },
  };
}

/** What `tools/list` could show, as one digest: equal digests, nothing to announce. */
function toolsFingerprint(tools: ToolRegistry): string {
  const shown = tools
    .entries()
    .map((entry) => [entry.name, entry.title, entry.description, entry.inputSchema, entry.grantingScopes]);
  return createHash('sha256').update(JSON.stringify(shown)).digest('base64url');
}
