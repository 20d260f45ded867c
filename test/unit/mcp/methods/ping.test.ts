import { describe, expect, it } from 'vitest';
import { dispatcher, methodContext, request } from '../harness.js';

describe('ping', () => {
  it('answers an empty result', async () => {
    const { ctx } = methodContext();
    expect(await dispatcher.request(request('ping', {}, 9), ctx)).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: {},
    });
  });

  it('is not a method of the stateless 2026-07-28 revision', async () => {
    const { ctx } = methodContext({ revision: '2026-07-28' });
    expect(await dispatcher.request(request('ping'), ctx)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Method not found: ping' },
    });
  });

  it('an unknown method is -32601', async () => {
    const { ctx } = methodContext();
    expect(await dispatcher.request(request('resources/list'), ctx)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32601, message: 'Method not found: resources/list' },
    });
  });
});
