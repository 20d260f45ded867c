/**
 * The upstream MCP server of bench/mcp-upstream.ts, in its own process: the official SDK's McpServer over stateful
 * Streamable HTTP (one server per session), JSON answers, one `echo` tool; `/healthz` for readiness. Port: $PORT.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const transports = new Map<string, StreamableHTTPServerTransport>();
const server = http.createServer(async (req, res) => {
  if (req.url === '/healthz') return void res.writeHead(200).end('ok');
  const id = req.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? transports.get(id) : undefined;
  if (!transport) {
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (sessionId) => void transports.set(sessionId, created),
      onsessionclosed: (sessionId) => void transports.delete(sessionId),
    });
    const mcp = new McpServer({ name: 'bench-upstream', version: '1.0.0' });
    mcp.registerTool(
      'echo',
      {
        description: 'Echoes its text',
        inputSchema: { text: z.string() },
        annotations: { readOnlyHint: true },
      },
      ({ text }) => ({ content: [{ type: 'text', text }] }),
    );
    await mcp.connect(created);
    transport = created;
  }
  await transport.handleRequest(req, res);
});
server.listen(Number(process.env.PORT), '127.0.0.1');
