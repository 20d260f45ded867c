import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  GatewayCaller,
  GatewayResponse,
  ToolCallRequest,
  ToolOperation,
} from '../../../src/mcp/index.js';
import {
  createTokenKit,
  MutableCatalog,
  type RunningApp,
  sampleOperations,
  startApp,
  type TokenKit,
} from '../../doubles/mcp.js';
import { until } from '../../processes/wait.js';

/**
 * The official SDK client always offers its latest revision in `initialize`; to pin it to an older one, this
 * transport rewrites the offered version (the server then echoes it and the client adopts it, as it does with
 * any server that answers an older revision).
 */
class PinnedTransport extends StreamableHTTPClientTransport {
  constructor(
    url: URL,
    private readonly pinned: string,
    token: string,
  ) {
    super(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });
  }
  override send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport['send']>[1]) {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      message = { ...message, params: { ...message.params, protocolVersion: this.pinned } } as JSONRPCMessage;
    }
    return super.send(message, options);
  }
}

/** A tiny backend standing in for the gateway: the caller sends real HTTP to it. */
function startBackend(): Promise<{ server: Server; base: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} auth=${req.headers.authorization ?? ''}`);
      const m = /^\/api\/Course\/(\d+)$/.exec(req.url ?? '');
      if (req.method === 'GET' && m) {
        if (m[1] === '404') {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such course"}');
          return;
        }
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: Number(m[1]), name: 'Algebra' }));
        return;
      }
      if (req.method === 'POST' && req.url === '/api/Course') {
        const body = JSON.parse(Buffer.concat(chunks).toString());
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 7, ...body }));
        return;
      }
      res.writeHead(404).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }),
    ),
  );
}

/** A GatewayCaller over real HTTP with its own service credential (never the user's token). */
function httpCaller(base: string): GatewayCaller {
  return {
    async call(op: ToolOperation, request: ToolCallRequest): Promise<GatewayResponse> {
      const headers: Record<string, string> = { ...request.headers, authorization: 'Bearer service-token' };
      let body: string | undefined;
      if (request.body !== undefined) {
        body = JSON.stringify(request.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(`${base}${request.path}`, { method: op.method, headers, body });
      return {
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body: Buffer.from(await res.arrayBuffer()),
        contentType: res.headers.get('content-type') ?? undefined,
      };
    },
  };
}

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

describe.each(['json', 'sse'] as const)('official SDK client, %s responses', (responseMode) => {
  let kit: TokenKit;
  let app: RunningApp;
  let backend: Awaited<ReturnType<typeof startBackend>>;
  let catalog: MutableCatalog;

  beforeAll(async () => {
    kit = await createTokenKit();
    backend = await startBackend();
    catalog = new MutableCatalog(sampleOperations());
    app = await startApp(() => ({
      issuer: 'https://auth.example.test',
      verifier: kit.verifier,
      catalog,
      caller: httpCaller(backend.base),
      serverInfo: { name: 'portcullis', version: '0.1.0' },
      responseMode,
    }));
  });
  afterAll(async () => {
    await app.close();
    await new Promise((r) => backend.server.close(r));
  });

  it.each(REVISIONS)(
    'revision %s: initialize, tools/list, tools/call within the token scopes',
    async (revision) => {
      const token = await kit.sign({
        sub: 'alice',
        client_id: 'c1',
        scope: 'read:courses-work',
        aud: app.url,
      });
      const client = new Client({ name: 'test', version: '1.0.0' });
      const transport = new PinnedTransport(new URL(app.url), revision, token);
      await client.connect(transport);
      expect(transport.protocolVersion).toBe(revision);
      expect(client.getServerVersion()).toEqual({ name: 'portcullis', version: '0.1.0' });

      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['getCourse', 'listCourses']);
      expect(tools[0]!.annotations?.readOnlyHint).toBe(revision === '2024-11-05' ? undefined : true);

      const result = await client.callTool({ name: 'getCourse', arguments: { id: 42 } });
      expect(result.isError).toBeUndefined();
      expect(result.content).toEqual([{ type: 'text', text: '{"id":42,"name":"Algebra"}' }]);
      expect(result.structuredContent).toEqual(
        revision >= '2025-06-18' ? { id: 42, name: 'Algebra' } : undefined,
      );
      expect(backend.seen.at(-1)).toBe('GET /api/Course/42 auth=Bearer service-token');

      const missing = await client.callTool({ name: 'getCourse', arguments: { id: 404 } });
      expect(missing.isError).toBe(true);
      expect(missing.content).toEqual([
        { type: 'text', text: 'HTTP 404 Not Found' },
        { type: 'text', text: '{"error":"no such course"}' },
      ]);

      // A tool outside the scopes: not listed, and calling it is 403 insufficient_scope.
      const denied = await client
        .callTool({ name: 'createCourse', arguments: { body: { name: 'x' } } })
        .catch((e) => e);
      expect(denied).toBeInstanceOf(StreamableHTTPError);
      expect((denied as StreamableHTTPError).code).toBe(403);

      await transport.terminateSession();
      await client.close();
    },
  );

  it('write scope: createCourse goes through with the JSON body', async () => {
    const token = await kit.sign({ sub: 'bob', client_id: 'c1', scope: 'write:courses-work', aud: app.url });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new PinnedTransport(new URL(app.url), '2025-11-25', token));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['createCourse']);
    const result = await client.callTool({
      name: 'createCourse',
      arguments: { body: { name: 'Poetry', credits: 3 } },
    });
    expect(result.structuredContent).toEqual({ id: 7, name: 'Poetry', credits: 3 });
    expect(backend.seen.at(-1)).toBe('POST /api/Course auth=Bearer service-token');
    await client.close();
  });

  it('notifications/tools/list_changed reaches a client with an open GET stream', async () => {
    const token = await kit.sign({ sub: 'carol', client_id: 'c1', scope: 'read:courses-work', aud: app.url });
    const client = new Client({ name: 'test', version: '1.0.0' });
    const changed = new Promise<void>((resolve) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()),
    );
    await client.connect(new PinnedTransport(new URL(app.url), '2025-11-25', token));
    // The client opens its GET stream after `initialized`, without telling us: wait until the server has it.
    await until(() => app.endpoint.stats().openStreams === 1, "the client's GET stream", {
      timeoutMs: 2000,
      everyMs: 10,
    });
    catalog.set(sampleOperations().filter((op) => op.operationId !== 'getCourse'));
    await changed;
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['listCourses']);
    catalog.set(sampleOperations());
    await client.close();
  });
});
