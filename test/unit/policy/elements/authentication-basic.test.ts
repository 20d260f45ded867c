import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';

describe('authentication-basic', () => {
  it('replaces Authorization with Basic credentials for the backend', async () => {
    const { outcome } = await inbound(
      '<authentication-basic username="svc" password="@(&quot;p@ss&quot;)" />',
      {
        headers: [['Authorization', 'Bearer client-token']],
      },
    );
    if (outcome.kind !== 'forward') throw new Error('expected forward');
    expect(outcome.request.headers).toContainEqual([
      'Authorization',
      `Basic ${Buffer.from('svc:p@ss').toString('base64')}`,
    ]);
  });

  it('refuses a username with a colon', async () => {
    const { context } = await inbound('<authentication-basic username="a:b" password="c" />');
    expect(context.lastError?.source).toBe('authentication-basic');
  });
});
