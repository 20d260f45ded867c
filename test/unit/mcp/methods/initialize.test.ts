import { InitializeResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { dispatcher, methodContext, request } from '../harness.js';

describe('initialize', () => {
  it.each(['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'])(
    'echoes supported revision %s',
    async (v) => {
      const { ctx } = methodContext();
      const reply = await dispatcher.request(
        request('initialize', {
          protocolVersion: v,
          capabilities: {},
          clientInfo: { name: 'x', version: '1' },
        }),
        ctx,
      );
      expect(reply).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: {
          protocolVersion: v,
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: 'portcullis', version: '0.1.0' },
        },
      });
      expect(InitializeResultSchema.safeParse((reply as { result: unknown }).result).success).toBe(true);
    },
  );

  it('offers the latest session revision for an unknown one (the client decides)', async () => {
    const { ctx } = methodContext();
    for (const v of ['2024-10-07', '1999-01-01', '2026-07-28']) {
      const reply = await dispatcher.request(request('initialize', { protocolVersion: v }), ctx);
      expect((reply as { result: { protocolVersion: string } }).result.protocolVersion).toBe('2025-11-25');
    }
  });

  it('rejects a missing protocolVersion with -32602', async () => {
    const { ctx } = methodContext();
    expect(await dispatcher.request(request('initialize', {}, 'a'), ctx)).toEqual({
      jsonrpc: '2.0',
      id: 'a',
      error: { code: -32602, message: 'initialize: "protocolVersion" must be a string' },
    });
  });

  it('includes instructions when configured', async () => {
    const { ctx } = methodContext();
    const reply = await dispatcher.request(request('initialize', { protocolVersion: '2025-06-18' }), {
      ...ctx,
      instructions: 'Use the Course API tools.',
    });
    expect((reply as { result: { instructions: string } }).result.instructions).toBe(
      'Use the Course API tools.',
    );
  });
});
