import { describe, expect, it } from 'vitest';
import { outbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('set-status', () => {
  it('sets code and reason of the response', async () => {
    const { response } = await outbound('<set-status code="418" reason="Teapot" />', { status: 200 });
    expect([response.status, response.reason]).toEqual([418, 'Teapot']);
  });

  it('uses the standard reason phrase when reason is omitted', async () => {
    const { response } = await outbound('<set-status code="404" />');
    expect(response.reason).toBe('Not Found');
  });

  it('takes the code from an expression', async () => {
    const { response } = await outbound(
      '<set-status code="@(context.Response.StatusCode + 1)" reason="x" />',
      { status: 200 },
    );
    expect(response.status).toBe(201);
  });

  it('validates a literal code', () => {
    expect(diagnosticsOf('<set-status code="99" />', 'outbound')).toEqual([
      'policies/outbound/set-status[1]: set-status/@code must be at least 100, got "99"',
    ]);
  });
});
