import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('set-backend-service', () => {
  it('routes to a base URL', async () => {
    const { outcome } = await inbound('<set-backend-service base-url="https://b.example.com/v2" />');
    expect(outcome.kind === 'forward' && outcome.request.backend).toEqual({
      baseUrl: 'https://b.example.com/v2',
      backendId: undefined,
    });
  });

  it('routes to a named backend chosen at request time', async () => {
    const { outcome } = await inbound(
      '<set-backend-service backend-id="@(context.Request.Headers.GetValueOrDefault(&quot;X-Pool&quot;, &quot;a&quot;))" />',
      { headers: [['X-Pool', 'b']] },
      fakeServices({ a: 'http://a.internal', b: 'http://b.internal' }),
    );
    expect(outcome.kind === 'forward' && outcome.request.backend).toEqual({
      baseUrl: 'http://b.internal',
      backendId: 'b',
    });
  });

  it('fails into on-error for an unknown backend id', async () => {
    const { context, outcome } = await inbound('<set-backend-service backend-id="ghost" />');
    expect(outcome.kind === 'respond' && outcome.response.status).toBe(500);
    expect(context.lastError?.reason).toBe('BackendNotFound');
  });

  it('needs exactly one of base-url and backend-id, and an absolute URL', () => {
    expect(diagnosticsOf('<set-backend-service />')).toEqual([
      'policies/inbound/set-backend-service[1]: set-backend-service needs exactly one of base-url and backend-id',
    ]);
    expect(diagnosticsOf('<set-backend-service base-url="/relative" />')).toEqual([
      'policies/inbound/set-backend-service[1]: set-backend-service/@base-url must be an absolute URL, got "/relative"',
    ]);
  });

  it('rejects Service Fabric as needing Azure', () => {
    expect(diagnosticsOf('<set-backend-service backend-id="x" sf-partition-key="1" />')[0]).toContain(
      'not supported: needs Azure Service Fabric',
    );
  });
});
