import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { McpError } from '../../../src/mcp/protocol/jsonrpc.js';
import { UpstreamTools } from '../../../src/mcp/upstream/aggregator.js';
import type { UpstreamServer } from '../../../src/mcp/upstream/types.js';
import { recordingLogger } from '../../doubles/logger.js';
import {
  type McpUpstream,
  type ModernMcpUpstream,
  startMcpUpstream,
  startModernMcpUpstream,
} from '../../doubles/mcp-upstream.js';
import { until } from '../../processes/wait.js';

/**
 * UpstreamTools over real MCP servers (the official SDK's McpServer on loopback), reached directly: names, filtering,
 * scopes, routing, and failures as JSON-RPC errors naming the server, within the timeout.
 */

let alpha: McpUpstream;
let omega: ModernMcpUpstream;
let silent: http.Server;
let silentUrl: string;

beforeAll(async () => {
  alpha = await startMcpUpstream('alpha', (server) => {
    server.registerTool('read_it', { annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: 'text', text: 'read' }],
    }));
    server.registerTool('write_it', { inputSchema: { v: z.string() } }, ({ v }) => ({
      content: [{ type: 'text', text: `wrote ${v}` }],
    }));
    server.registerTool('hidden', { annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: 'text', text: 'hidden' }],
    }));
  });
  omega = await startModernMcpUpstream('omega', (server) => {
    server.registerTool('read_it', { annotations: { readOnlyHint: true } }, () => ({
      content: [{ type: 'text', text: 'read from 2026' }],
    }));
  });
  // Accepts connections and reads requests, answers nothing: a server that hangs.
  silent = http.createServer((req) => req.resume());
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await alpha.close();
  await omega.close();
  silent.closeAllConnections();
  silent.close();
});

function server(apiId: string, prefix: string, exposes = (_: string) => true): UpstreamServer {
  return {
    apiId,
    name: apiId.toUpperCase(),
    prefix,
    productIds: ['p'],
    exposes,
    needsWrite: (tool) => tool.annotations?.readOnlyHint !== true,
  };
}

function tools(servers: UpstreamServer[], timeoutMs = 5000) {
  const urls: Record<string, string> = { a: alpha.url, o: omega.url, s: silentUrl };
  const changes: string[] = [];
  const logged = recordingLogger();
  const upstream = new UpstreamTools({
    catalog: { servers: () => servers, onChange: () => () => {} },
    router: (s) => ({ url: new URL(urls[s.apiId]!), fetch }),
    timeoutMs,
    onToolsChanged: (reason) => changes.push(reason),
    logger: logged.logger,
  });
  return { upstream, changes, logs: logged.lines };
}

const caller = (scopes: string[], downstream = 'session:1') => ({
  subject: { sub: 'alice', clientId: 'c', scopes },
  downstream,
});

describe('UpstreamTools', () => {
  it('lists exposed, granted tools as <prefix>__<tool>, and routes calls to the owning server', async () => {
    const { upstream } = tools([server('a', 'al', (name) => name !== 'hidden')]);
    const both = caller(['read:p-work', 'write:p-work']);
    expect((await upstream.list(both)).map((t) => t.name).sort()).toEqual(['al__read_it', 'al__write_it']);
    expect((await upstream.list(caller(['read:p-work']))).map((t) => t.name)).toEqual(['al__read_it']);
    expect(await upstream.list(caller(['read:other-work']))).toEqual([]);
    expect(await upstream.call('al__write_it', { v: 'x' }, both)).toEqual({
      content: [{ type: 'text', text: 'wrote x' }],
    });
    // Not exposed, not granted, not existing: one answer, the unknown tool.
    for (const [name, who] of [
      ['al__hidden', both],
      ['al__write_it', caller(['read:p-work'])],
      ['al__nope', both],
    ] as const) {
      await expect(upstream.call(name, {}, who)).rejects.toMatchObject({
        code: -32602,
        message: `Unknown tool: ${name}`,
      });
    }
    expect(upstream.owns('al__x')).toBe(true);
    expect(upstream.owns('other__x')).toBe(false);
    await upstream.close();
  });

  it('opens one upstream session per downstream session, and ends them with it', async () => {
    const { upstream } = tools([server('a', 'al')]);
    const opened = alpha.opened.length;
    await upstream.list(caller(['read:p-work'], 'session:x'));
    await upstream.call('al__read_it', {}, caller(['read:p-work'], 'session:x'));
    await upstream.list(caller(['read:p-work'], 'session:y'));
    expect(alpha.opened.length - opened).toBe(2);
    expect(upstream.sessions).toBe(2);
    await upstream.endSession('session:x', caller(['read:p-work'], 'session:x').subject);
    expect(upstream.sessions).toBe(1);
    const ended = alpha.opened[opened]!;
    await expect.poll(() => alpha.closed.includes(ended)).toBe(true);
    await upstream.close();
  });

  it('a server that does not answer is a JSON-RPC error naming it within the timeout, and leaves the list', async () => {
    const { upstream, logs } = tools([server('a', 'al'), server('s', 'si')], 300);
    const who = caller(['read:p-work', 'write:p-work']);
    expect((await upstream.list(who)).map((t) => t.name).sort()).toEqual([
      'al__hidden',
      'al__read_it',
      'al__write_it',
    ]);
    expect(logs.map((line) => line.message)).toContain('mcp: tools/list of MCP server "S" failed');
    const failed = upstream.call('si__anything', {}, who);
    await expect(failed).rejects.toBeInstanceOf(McpError);
    await expect(failed).rejects.toMatchObject({
      code: -32000,
      message: expect.stringContaining('MCP server "S"'),
    });
    await upstream.close();
  });

  it('reaches a server of either era: 2026-07-28 without a session, a session-era one probed once per process', async () => {
    const { upstream } = tools([server('a', 'al'), server('o', 'om')]);
    const who = caller(['read:p-work']);
    expect((await upstream.list(who)).map((t) => t.name).sort()).toEqual([
      'al__hidden',
      'al__read_it',
      'om__read_it',
    ]);
    expect(await upstream.call('om__read_it', {}, who)).toEqual({
      content: [{ type: 'text', text: 'read from 2026' }],
    });
    // The 2026-07-28 server heard no initialize, and its result's envelope (its serverInfo) is not passed on.
    expect(omega.requests.map((r) => r.rpc)).toContain('server/discover');
    expect(omega.requests.map((r) => r.rpc)).not.toContain('initialize');
    // This process has met the session-era server: a new downstream session goes straight to initialize.
    const probes = () => alpha.requests.filter((r) => r.rpc === 'server/discover').length;
    const before = probes();
    await upstream.list(caller(['read:p-work'], 'session:later'));
    expect(probes()).toBe(before);
    expect(alpha.requests.at(-1)?.rpc).toBe('tools/list');
    await upstream.close();
  });

  it("a 2026-07-28 server's list changes arrive on a listen stream, opened again when it ends", async () => {
    const { upstream, changes } = tools([server('o', 'om')]);
    const listens = () => omega.requests.filter((r) => r.rpc === 'subscriptions/listen').length;
    const before = listens();
    await upstream.list(caller(['read:p-work'], 'session:listening'));
    await until(() => listens() === before + 1, 'the listen stream', 5_000);
    omega.dropConnections();
    await until(() => listens() === before + 2, 'the listen stream opened again', 5_000);
    omega.addTool('added_later');
    await until(() => changes.includes('upstream o'), 'the list change relayed', 5_000);
    await upstream.close();
  });
});
