import { describe, expect, it } from 'vitest';
import { header, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('mock-response', () => {
  it('answers with the status and content type without calling the backend', async () => {
    const { outcome } = await inbound('<mock-response status-code="202" content-type="application/json" />');
    if (outcome.kind !== 'respond') throw new Error('expected respond');
    expect(outcome.response.status).toBe(202);
    expect(outcome.response.reason).toBe('Accepted');
    expect(header(outcome.response, 'Content-Type')).toEqual(['application/json']);
  });

  it('defaults to 200', async () => {
    const { outcome } = await inbound('<mock-response />');
    expect(outcome.kind === 'respond' && outcome.response.status).toBe(200);
  });

  it('does not accept expressions', () => {
    expect(diagnosticsOf('<mock-response status-code="@(200)" />')).toEqual([
      'policies/inbound/mock-response[1]: mock-response/@status-code does not allow policy expressions, got "@(200)"',
    ]);
  });
});
