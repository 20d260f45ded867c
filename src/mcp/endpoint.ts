import type Koa from 'koa';
import { jsonLogger, type Logger } from '../log.js';
import { locateResource } from './auth/resource-metadata.js';
import { mcpKoaMiddleware } from './koa.js';
import { methodTable } from './methods/index.js';
import { Dispatcher } from './protocol/dispatcher.js';
import type { MethodContext } from './protocol/method.js';
import { ToolRegistry } from './tools/registry.js';
import { SessionStore, type SessionStoreOptions } from './transport/sessions.js';
import { type ResponseMode, StreamableHttpTransport } from './transport/streamable-http.js';
import type { AccessTokenVerifier, GatewayCaller, ServerInfo, ToolCatalog } from './types.js';

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
  /** Largest POST body accepted (default 4 MiB). */
  readonly maxBodyBytes?: number;
  readonly sessions?: SessionStoreOptions;
  readonly keepAliveMs?: number;
  /** Where failures and refused tokens are logged (default: JSON lines on stderr). */
  readonly logger?: Logger;
}

export interface McpEndpoint {
  readonly middleware: Koa.Middleware;
  /** Live counts, for metrics and tests. */
  stats(): { readonly sessions: number; readonly openStreams: number; readonly tools: number };
  /** Ends open streams and stops listening to the catalog. */
  close(): void;
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
  const logger = options.logger ?? jsonLogger;
  const tools = new ToolRegistry(options.catalog, { warn: (m) => logger.warn(m) });
  const sessions = new SessionStore(options.sessions);
  const dispatcher = new Dispatcher(methodTable);
  const pageSize = options.pageSize ?? 100;

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
    serverInfo: options.serverInfo,
    instructions: options.instructions,
    pageSize,
    logger,
  });

  const transport = new StreamableHttpTransport({
    dispatcher,
    sessions,
    context,
    responseMode: options.responseMode,
    keepAliveMs: options.keepAliveMs,
    ...(options.maxBatchSize !== undefined ? { maxBatchSize: options.maxBatchSize } : {}),
    ...(options.batchConcurrency !== undefined ? { batchConcurrency: options.batchConcurrency } : {}),
  });
  const stopBroadcast = tools.onChange(() => transport.broadcastToolListChanged());

  const middleware = mcpKoaMiddleware({
    location,
    issuer: options.issuer,
    verifier: options.verifier,
    transport,
    tools,
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
      openStreams: [...sessions.withStreams()].length,
      tools: tools.entries().length,
    }),
    close() {
      stopBroadcast();
      tools.close();
      sessions.clear();
    },
  };
}
