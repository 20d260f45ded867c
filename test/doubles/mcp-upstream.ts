import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler, McpServer as McpServerV2 } from '@modelcontextprotocol/server';

/**
 * A remote MCP server as teams run them: the official TypeScript SDK's `McpServer` over stateful Streamable HTTP (one
 * server and transport per session), on loopback. It records what reached it — each request's method, headers and
 * JSON-RPC method — and which sessions opened and were ended by DELETE.
 */
export interface McpUpstream {
  readonly url: string;
  readonly requests: ReadonlyArray<{
    readonly method: string;
    readonly headers: http.IncomingHttpHeaders;
    readonly rpc?: string;
    /** The tool a `tools/call` named. */
    readonly tool?: string;
  }>;
  readonly opened: readonly string[];
  readonly closed: readonly string[];
  /**
   * Registers one more tool on every open session's server: each sends `notifications/tools/list_changed`. Read-only
   * (`readOnlyHint: true`) when asked.
   */
  addTool(name: string, options?: { readOnly?: boolean }): void;
  /**
   * Sends a log message (`notifications/message`, level info) outside any request on one session: it goes on the
   * session's GET stream, and is lost when none is open.
   */
  log(sessionId: string, data: string): Promise<void>;
  close(): Promise<void>;
}

export async function startMcpUpstream(
  name: string,
  register: (server: McpServer) => void,
): Promise<McpUpstream> {
  const requests: { method: string; headers: http.IncomingHttpHeaders; rpc?: string; tool?: string }[] = [];
  const opened: string[] = [];
  const closed: string[] = [];
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const serverOf = new Map<string, McpServer>();

  const httpServer = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text === '' ? undefined : (JSON.parse(text) as unknown);
    const rpc = (body as { method?: string } | undefined)?.method;
    const tool = (body as { params?: { name?: unknown } } | undefined)?.params?.name;
    requests.push({
      method: req.method ?? '',
      headers: req.headers,
      ...(rpc ? { rpc } : {}),
      ...(rpc === 'tools/call' && typeof tool === 'string' ? { tool } : {}),
    });
    const sessionId = req.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? transports.get(sessionId) : undefined;
    if (!transport) {
      if (req.method !== 'POST' || typeof sessionId === 'string') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32001, message: 'Session not found' },
          }),
        );
        return;
      }
      const created: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          transports.set(id, created);
          serverOf.set(id, server);
          opened.push(id);
        },
        onsessionclosed: (id) => {
          transports.delete(id);
          closed.push(id);
        },
      });
      const server = new McpServer(
        { name, version: '1.0.0' },
        { capabilities: { tools: { listChanged: true }, logging: {} } },
      );
      register(server);
      await server.connect(created);
      servers.push(server);
      transport = created;
    }
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    opened,
    closed,
    addTool(toolName, options = {}) {
      for (const server of servers) {
        if (!server.isConnected()) continue;
        const description = `added later: ${toolName}`;
        const annotations = options.readOnly ? { annotations: { readOnlyHint: true } } : {};
        server.registerTool(toolName, { description, ...annotations }, () => ({
          content: [{ type: 'text', text: toolName }],
        }));
      }
    },
    async log(sessionId, data) {
      const server = serverOf.get(sessionId);
      if (!server) throw new Error(`no upstream session ${sessionId}`);
      await server.server.sendLoggingMessage({ level: 'info', data }, sessionId);
    },
    async close() {
      for (const server of servers) await server.close().catch(() => {});
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

/** An upstream that wants its own OAuth: every request is 401 with its own challenge (never to be relayed). */
export async function startLockedUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const httpServer = http.createServer((req, res) => {
    req.resume();
    res
      .writeHead(401, {
        'www-authenticate':
          'Bearer resource_metadata="https://upstream-as.example/.well-known/oauth-protected-resource/mcp"',
        'content-type': 'application/json',
      })
      .end(JSON.stringify({ error: 'invalid_token', error_description: 'upstream-secret-realm' }));
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

/**
 * A remote MCP server that speaks only the session-free revision, 2026-07-28: the official TypeScript SDK v2's
 * `McpServer` served by its `createMcpHandler` with `legacy: 'reject'` (a fresh server per request; `initialize` and
 * every other claim-less request are answered with the unsupported-protocol-version error; no sessions, no GET
 * stream, list changes on `subscriptions/listen` streams). Node's `http` is bridged to the handler's web-standard
 * `fetch` here (`@modelcontextprotocol/node` does it for real deployments). It records what reached it, as
 * `startMcpUpstream` does.
 */
export interface ModernMcpUpstream {
  readonly url: string;
  readonly requests: McpUpstream['requests'];
  /** Registers one more tool: every open `subscriptions/listen` stream gets `notifications/tools/list_changed`. */
  addTool(name: string): void;
  /** Drops every open connection (its listen streams end, as a proxy's stream timeout ends them); still listens. */
  dropConnections(): void;
  close(): Promise<void>;
}

export async function startModernMcpUpstream(
  name: string,
  register: (server: McpServerV2) => void,
): Promise<ModernMcpUpstream> {
  const requests: { method: string; headers: http.IncomingHttpHeaders; rpc?: string; tool?: string }[] = [];
  const added: string[] = [];
  const handler = createMcpHandler(
    () => {
      const server = new McpServerV2(
        { name, version: '1.0.0' },
        { capabilities: { tools: { listChanged: true }, logging: {} } },
      );
      register(server);
      for (const toolName of added)
        server.registerTool(toolName, { description: `added later: ${toolName}` }, () => ({
          content: [{ type: 'text', text: toolName }],
        }));
      return server;
    },
    { legacy: 'reject' },
  );
  const httpServer = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const parsed = body.length === 0 ? undefined : (JSON.parse(body.toString('utf8')) as unknown);
    const rpc = (parsed as { method?: string } | undefined)?.method;
    const tool = (parsed as { params?: { name?: unknown } } | undefined)?.params?.name;
    requests.push({
      method: req.method ?? '',
      headers: req.headers,
      ...(rpc ? { rpc } : {}),
      ...(rpc === 'tools/call' && typeof tool === 'string' ? { tool } : {}),
    });
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    const headers = new Headers();
    for (const [key, value] of Object.entries(req.headers))
      if (value !== undefined) headers.set(key, Array.isArray(value) ? value.join(', ') : value);
    const request = new Request(`http://${req.headers.host}${req.url}`, {
      method: req.method ?? 'GET',
      headers,
      signal: aborted.signal,
      ...(body.length === 0 || req.method === 'GET' || req.method === 'HEAD' ? {} : { body }),
    });
    try {
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch {
      res.destroy();
    }
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    addTool(toolName) {
      added.push(toolName);
      handler.notify.toolsChanged();
    },
    dropConnections() {
      httpServer.closeAllConnections();
    },
    async close() {
      await handler.close().catch(() => {});
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}
