import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A sample remote MCP server, as a team would run one: the official TypeScript SDK's McpServer over Streamable HTTP
 * (one session per client), a few note tools, and an API key it requires in `X-Api-Key` (the gateway injects it
 * from a secret named value; clients never hold it). Notes live in memory.
 */
const apiKey = process.env.NOTES_API_KEY ?? 'demo-notes-key';
const notes: string[] = ['Buy milk'];

function notesServer(): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'list_notes',
    { description: 'Lists every note.', annotations: { readOnlyHint: true } },
    () => ({ content: [{ type: 'text', text: JSON.stringify(notes) }] }),
  );
  server.registerTool(
    'add_note',
    { description: 'Adds a note.', inputSchema: { text: z.string().min(1) } },
    ({ text }) => {
      notes.push(text);
      return { content: [{ type: 'text', text: `Saved note ${notes.length}.` }] };
    },
  );
  server.registerTool(
    'delete_all_notes',
    {
      description: 'Deletes every note (the gateway does not expose it).',
      annotations: { destructiveHint: true },
    },
    () => {
      notes.length = 0;
      return { content: [{ type: 'text', text: 'Deleted.' }] };
    },
  );
  return server;
}

const sessions = new Map<string, StreamableHTTPServerTransport>();

const http = createServer(async (request, response) => {
  if (request.url === '/healthz') return void response.writeHead(200).end('ok');
  if (request.headers['x-api-key'] !== apiKey)
    return void response.writeHead(403, { 'content-type': 'text/plain' }).end('missing or wrong X-Api-Key\n');
  const id = request.headers['mcp-session-id'];
  let transport = typeof id === 'string' ? sessions.get(id) : undefined;
  if (!transport) {
    if (request.method !== 'POST' || typeof id === 'string')
      return void response.writeHead(404, { 'content-type': 'text/plain' }).end('no such session\n');
    const created = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
      onsessionclosed: (sessionId) => void sessions.delete(sessionId),
    });
    await notesServer().connect(created);
    transport = created;
  }
  await transport.handleRequest(request, response);
});

http.listen(Number(process.env.PORT ?? 8083), process.env.HOST ?? '127.0.0.1', () => {
  const { address, port } = http.address() as AddressInfo;
  console.log(`notes MCP server listening on ${address}:${port}/mcp`);
});
const stop = () => http.close(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
