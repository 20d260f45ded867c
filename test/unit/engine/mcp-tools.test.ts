import { describe, expect, it } from 'vitest';
import { mcpToolFiltersOf } from '../../../src/engine/mcp-tools.js';

const filter = mcpToolFiltersOf({
  apis: [
    { id: 'weather', type: 'mcp', mcp: { tools: ['get_*', 'set_alert'] } },
    { id: 'open', type: 'mcp', mcp: {} },
  ] as never,
}).get('weather')!;

const tools = (...names: string[]) => names.map((name) => ({ name, inputSchema: { type: 'object' } }));
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('an MCP server API tool filter at its own URL', () => {
  it('is only made for an API with mcp.tools', () => {
    expect([
      ...mcpToolFiltersOf({
        apis: [
          { id: 'weather', type: 'mcp', mcp: { tools: ['a'] } },
          { id: 'open', type: 'mcp', mcp: {} },
          { id: 'rest', type: 'http' },
        ] as never,
      }).keys(),
    ]).toEqual(['weather']);
  });

  it('answers a call of a hidden tool itself, as the server answers a tool it does not have', () => {
    const inspected = filter.inspect(
      json({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'admin_reset' } }),
    );
    expect(inspected.kind).toBe('refused');
    if (inspected.kind !== 'refused') return;
    expect(inspected.response.status).toBe(200);
    expect(JSON.parse(inspected.response.body.toString())).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32602, message: 'Unknown tool: admin_reset' },
    });
    const batch = filter.inspect(
      json([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_x' } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'drop_all' } },
      ]),
    );
    expect(batch.kind === 'refused' && batch.response.status).toBe(400);
  });

  it('lets shown calls, other methods and non-JSON pass, keeping the ids of the listings', () => {
    for (const body of [
      json({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_forecast' } }),
      json({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      Buffer.from('not json'),
    ])
      expect(filter.inspect(body)).toEqual({ kind: 'pass', listIds: new Set() });
    expect(filter.inspect(json({ jsonrpc: '2.0', id: 'a', method: 'tools/list' }))).toEqual({
      kind: 'pass',
      listIds: new Set(['string:a']),
    });
  });

  it('takes the hidden tools out of a JSON answer to a listing, and leaves other answers alone', () => {
    const answer = {
      jsonrpc: '2.0',
      id: 3,
      result: { tools: tools('get_forecast', 'admin_reset', 'set_alert') },
    };
    const reshaped = filter.reshape(json(answer), 'application/json', new Set(['number:3']));
    expect(JSON.parse(reshaped!.toString()).result.tools.map((t: { name: string }) => t.name)).toEqual([
      'get_forecast',
      'set_alert',
    ]);
    // Another id, or nothing hidden: unchanged.
    expect(filter.reshape(json(answer), 'application/json', new Set(['number:4']))).toBeUndefined();
    const clean = { jsonrpc: '2.0', id: 3, result: { tools: tools('get_forecast') } };
    expect(filter.reshape(json(clean), 'application/json', new Set(['number:3']))).toBeUndefined();
  });

  it('rewrites the listing event of an SSE answer, keeping its other fields and events', () => {
    const listing = { jsonrpc: '2.0', id: 3, result: { tools: tools('admin_reset', 'get_forecast') } };
    const progress = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };
    const sse = `: open\n\nevent: message\ndata: ${JSON.stringify(progress)}\n\nevent: message\nid: 9\ndata: ${JSON.stringify(listing)}\n\n`;
    const reshaped = filter.reshape(Buffer.from(sse), 'text/event-stream', new Set(['number:3']))!.toString();
    const kept = { ...listing, result: { tools: tools('get_forecast') } };
    expect(reshaped).toBe(
      `: open\n\nevent: message\ndata: ${JSON.stringify(progress)}\n\nevent: message\nid: 9\ndata: ${JSON.stringify(kept)}\n\n`,
    );
  });
});
