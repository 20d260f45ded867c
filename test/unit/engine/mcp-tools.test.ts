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

  it('is made for an API in a product when auth is configured (the write rule), and hides nothing by itself', () => {
    const rules = mcpToolFiltersOf({
      apis: [
        { id: 'weather', type: 'mcp', urlSuffix: 'weather/mcp', mcp: {} },
        { id: 'loose', type: 'mcp', urlSuffix: 'loose/mcp', mcp: {} },
      ],
      products: [{ id: 'tools', apis: ['weather'] }],
      auth: { baseUrl: 'http://127.0.0.1:8080' },
    } as never);
    expect([...rules.keys()]).toEqual(['weather']);
    expect(rules.get('weather')!.hides).toBe(false);
  });

  describe('the write rule (mcp.writeTools) with a token', () => {
    const of = (writeTools: unknown) =>
      mcpToolFiltersOf({
        apis: [{ id: 'weather', type: 'mcp', urlSuffix: 'weather/mcp', mcp: { writeTools } }],
        products: [{ id: 'tools', apis: ['weather'] }],
        auth: { baseUrl: 'http://127.0.0.1:8080' },
      } as never).get('weather')!;
    const call = (name: string, id: unknown = 7) =>
      json({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } });
    const read = ['read:tools-work'];
    /** A server's answer to `tools/list` (id 1): one tool marked read-only, one not. */
    const listing = {
      jsonrpc: '2.0',
      id: 1,
      result: {
        tools: [
          { name: 'get_forecast', inputSchema: {}, annotations: { readOnlyHint: true } },
          { name: 'set_alert', inputSchema: {} },
        ],
      },
    };

    it('refuses a listed write tool to a read-only token with 403 insufficient_scope and the step-up challenge', () => {
      const rules = of(['set_*']);
      const refused = rules.inspect(call('set_alert'), read);
      expect(refused.kind).toBe('refused');
      if (refused.kind !== 'refused') return;
      expect(refused.response.status).toBe(403);
      expect(refused.response.headers).toContainEqual([
        'www-authenticate',
        'Bearer error="insufficient_scope", error_description="This call requires scope write:tools-work", ' +
          'scope="read:tools-work write:tools-work", resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/weather/mcp"',
      ]);
      expect(JSON.parse(refused.response.body.toString())).toEqual({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32000, message: 'Forbidden: the access token lacks scope write:tools-work' },
      });
      expect(rules.inspect(call('get_forecast'), read).kind).toBe('pass');
      expect(rules.inspect(call('set_alert'), ['write:tools-work']).kind).toBe('pass');
      // Write does not imply read.
      expect(rules.inspect(call('get_forecast'), ['write:tools-work']).kind).toBe('refused');
      // No token checked (no auth on this request): nothing to decide by.
      expect(rules.inspect(call('set_alert')).kind).toBe('pass');
    });

    it('with annotations, learns readOnlyHint from the listing (which it leaves whole, for step-up)', () => {
      const rules = of('annotations');
      // Not seen in a listing yet: a write tool, as an unmarked tool is.
      expect(rules.inspect(call('get_forecast'), read).kind).toBe('refused');
      expect(rules.reshape(json(listing), 'application/json', new Set(['number:1']))).toBeUndefined();
      expect(rules.inspect(call('get_forecast'), read).kind).toBe('pass');
      expect(rules.inspect(call('set_alert'), read).kind).toBe('refused');
      expect(rules.inspect(call('set_alert'), ['read:tools-work', 'write:tools-work']).kind).toBe('pass');
    });

    it('with annotations and a shared store, what one engine process learns from a listing the other recalls', async () => {
      const shared = new Map<string, boolean>();
      const hints = {
        get: async (apiId: string, tool: string) => shared.get(`${apiId}/${tool}`),
        set: (apiId: string, tool: string, readOnly: boolean) => shared.set(`${apiId}/${tool}`, readOnly),
      };
      const config = {
        apis: [{ id: 'weather', type: 'mcp', urlSuffix: 'weather/mcp', mcp: {} }],
        products: [{ id: 'tools', apis: ['weather'] }],
        auth: { baseUrl: 'http://127.0.0.1:8080' },
      } as never;
      const [one, two] = [mcpToolFiltersOf(config, hints), mcpToolFiltersOf(config, hints)].map(
        (filters) => filters.get('weather')!,
      );
      one!.reshape(json(listing), 'application/json', new Set(['number:1']));
      expect(shared).toEqual(
        new Map([
          ['weather/get_forecast', true],
          ['weather/set_alert', false],
        ]),
      );
      // Before recalling, the other process has seen no listing: a write tool.
      expect(two!.inspect(call('get_forecast'), read).kind).toBe('refused');
      await two!.recall(call('get_forecast'));
      expect(two!.inspect(call('get_forecast'), read).kind).toBe('pass');
      await two!.recall(call('set_alert'));
      expect(two!.inspect(call('set_alert'), read).kind).toBe('refused');
    });
  });
});
