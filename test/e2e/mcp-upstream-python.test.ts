import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/config/plan.js';
import { HeadlessProvider } from '../doubles/mcp-oauth-provider.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * A remote MCP server built with the official MCP Python SDK (MCPServer, FastMCP's name since mcp 2; its answers are
 * server-sent events) behind Portcullis as an API of type mcp: the official TypeScript SDK client reaches its tools in
 * /v1/mcp, through Envoy both ways.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const PYTHON = path.join(here, 'python-sdk', '.venv', 'bin', 'python');
const SERVER = path.join(here, 'python-sdk', 'upstream_server.py');

let stack: Stack;
let upstream: ChildProcess;

beforeAll(async () => {
  if (!existsSync(PYTHON))
    throw new Error(
      `${PYTHON} is missing: run \`npm run setup -- --tests\` (it installs the MCP Python SDK)`,
    );
  const port = await freePort();
  upstream = spawn(PYTHON, [SERVER, String(port)], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/mcp`;
  await until(
    async () => {
      try {
        // Any answer means it listens (a GET without a session is refused).
        await (await fetch(url)).arrayBuffer();
        return true;
      } catch {
        return false;
      }
    },
    'the Python MCP server to listen',
    20_000,
  );
  stack = await startStack({
    apisYaml: `  - { id: py, name: Python tools, type: mcp, urlSuffix: py, serviceUrl: "${url}" }`,
    productsYaml: '  - { id: tools, apis: [py] }',
    authYaml: '  dataDir: auth-data',
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  upstream?.kill('SIGTERM');
});

describe('an MCP server built with the Python SDK behind the gateway', () => {
  it('its tools in /v1/mcp, prefixed, called through Envoy and the engine (SSE answers streamed back)', async () => {
    const provider = new HeadlessProvider({
      user: USERS.alice,
      clientName: 'py upstream e2e',
      issuer: stack.issuer,
      // The server's tools are not marked read-only, so calling them takes the write scope; the 401 challenge asks
      // for the read scopes only (scope selection), so the client asks for both itself.
      scope: 'read:tools-work write:tools-work',
    });
    const first = new Client({ name: 'e2e', version: '1.0.0' });
    const firstTransport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), {
      authProvider: provider,
    });
    await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
    await firstTransport.finishAuth(provider.code!);
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(stack.mcpUrl), { authProvider: provider });
    await client.connect(transport);

    const tools = (await client.listTools()).tools;
    expect(tools.map((tool) => tool.name).filter((name) => name.startsWith('py__'))).toEqual([
      'py__add',
      'py__shout',
    ]);
    expect(tools.find((tool) => tool.name === 'py__add')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'integer' }, b: { type: 'integer' } },
    });
    const shouted = await client.callTool({ name: 'py__shout', arguments: { text: 'quiet' } });
    expect((shouted.content as { text: string }[])[0]!.text).toBe('QUIET');
    const added = await client.callTool({ name: 'py__add', arguments: { a: 2, b: 40 } });
    expect((added.content as { text: string }[])[0]!.text).toBe('42');
    // The server's own validation error comes back as its tool error.
    const invalid = await client.callTool({ name: 'py__add', arguments: { a: 'x', b: 1 } });
    expect(invalid.isError).toBe(true);
    await transport.terminateSession();
    await client.close();
  }, 60_000);
});
