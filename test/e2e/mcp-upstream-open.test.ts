import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/config/plan.js';
import { type McpUpstream, startMcpUpstream } from '../doubles/mcp-upstream.js';
import { startUp, type UpRun } from '../processes/up.js';

/**
 * An MCP server API without `auth`, through `portcullis up` (Envoy and the engine): DNS-rebinding protection (MCP
 * transport, "Security Warning": servers MUST validate Origin) does not depend on a token. A page on a foreign origin
 * (a rebound name) is refused before anything reaches the server; the gateway's own origins (its listener, by its
 * local names) and clients that send no Origin (the SDK's, in Node) go through. (`mcp.allowedOrigins` needs `auth`.)
 */

let upstream: McpUpstream;
let run: UpRun;
let gatewayUrl: string;
let gatewayPort: number;

beforeAll(async () => {
  upstream = await startMcpUpstream('open', (server) => {
    server.registerTool('ping_me', { description: 'Answers pong' }, () => ({
      content: [{ type: 'text', text: 'pong' }],
    }));
  });
  gatewayPort = await freePort();
  gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-mcp-open-'));
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(
    file,
    `gateway: { http: { host: 127.0.0.1, port: ${gatewayPort} } }
admin: { port: ${await freePort()} }
envoy: { concurrency: 1 }
apis:
  - { id: open, name: Open, type: mcp, urlSuffix: open, serviceUrl: "${upstream.url}" }
`,
  );
  run = startUp(file, process.env, [], 'json');
  await run.waitFor('Press Ctrl-C to stop.');
}, 60_000);

afterAll(async () => {
  await run?.stop(10_000);
  await upstream?.close();
});

const initialize = (origin?: string) =>
  fetch(`${gatewayUrl}/open/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(origin ? { origin } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } },
    }),
  });

describe('an MCP server API without auth, at its own URL', () => {
  it('refuses a foreign Origin (DNS rebinding) with 403 before the server sees the request', async () => {
    const before = upstream.requests.length;
    for (const origin of [
      'http://evil.example',
      `http://rebound.example:${gatewayPort}`,
      'http://localhost:3000',
    ]) {
      const refused = await initialize(origin);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toEqual({
        statusCode: 403,
        message: `Forbidden: Origin "${origin}" is not allowed`,
      });
    }
    expect(upstream.requests.length).toBe(before);
  }, 30_000);

  it("lets the gateway's own origins and Origin-less clients through", async () => {
    for (const origin of [`http://127.0.0.1:${gatewayPort}`, `http://localhost:${gatewayPort}`]) {
      const allowed = await initialize(origin);
      expect(allowed.status).toBe(200);
      await allowed.arrayBuffer();
    }
    // The official SDK client (no Origin, no token): the server's own tools, called through the gateway.
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gatewayUrl}/open/mcp`)));
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['ping_me']);
    const result = await client.callTool({ name: 'ping_me', arguments: {} });
    expect((result.content as { text: string }[])[0]!.text).toBe('pong');
    await client.close();
  }, 30_000);
});
