import { describe, expect, it } from 'vitest';
import {
  fakeServices,
  header,
  pipelineOf,
  policies,
  request,
  runAll,
} from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('quota-by-key', () => {
  it('allows calls up to the quota in a fixed window, then 403 QuotaExceeded with Retry-After', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound:
          '<quota-by-key calls="2" renewal-period="3600" counter-key="@(context.Request.IpAddress)" first-period-start="2025-01-01T00:00:00Z" />',
      }),
    );
    services.now = Date.parse('2025-01-01T10:30:00Z');
    expect((await runAll(p, request(), services)).response.status).toBe(200);
    expect((await runAll(p, request(), services)).response.status).toBe(200);
    const refused = await runAll(p, request(), services);
    expect(refused.response.status).toBe(403);
    expect(header(refused.response, 'Retry-After')).toEqual(['1800']);
    expect(JSON.parse(refused.response.body.toString()).message).toBe(
      'Out of call volume quota. Quota will be replenished in 00:30:00.',
    );
    services.now = Date.parse('2025-01-01T11:00:01Z');
    expect((await runAll(p, request(), services)).response.status).toBe(200);
  });

  it('checks renewal-period, first-period-start and bandwidth', () => {
    expect(diagnosticsOf('<quota-by-key calls="1" renewal-period="60" counter-key="k" />')).toEqual([
      'policies/inbound/quota-by-key[1]: quota-by-key/@renewal-period must be 0 or at least 300, got "60"',
    ]);
    expect(
      diagnosticsOf(
        '<quota-by-key calls="1" renewal-period="0" counter-key="k" first-period-start="soon" />',
      ),
    ).toEqual([
      'policies/inbound/quota-by-key[1]: quota-by-key/@first-period-start must be an ISO 8601 date, got "soon"',
    ]);
    expect(diagnosticsOf('<quota-by-key renewal-period="0" counter-key="k" />')).toEqual([
      'policies/inbound/quota-by-key[1]: quota-by-key needs calls or bandwidth, got neither',
    ]);
  });

  it('bandwidth counts request and response bytes at the end of the request; the next call is refused', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({ inbound: '<quota-by-key bandwidth="2" renewal-period="300" counter-key="k" />' }),
    );
    services.now = Date.parse('2025-01-01T00:00:10Z');
    const upload = { method: 'POST', headers: [['Content-Length', '1000']] as [string, string][] };
    const first = await runAll(p, request(upload), services, { body: 'x'.repeat(1000) });
    expect(first.response.status).toBe(200);
    // 1000 + 1000 bytes: still under 2 KB.
    expect((await runAll(p, request(), services, { body: 'y'.repeat(48) })).response.status).toBe(200);
    const refused = await runAll(p, request(), services);
    expect(refused.response.status).toBe(403);
    expect(JSON.parse(refused.response.body.toString()).message).toBe(
      'Out of bandwidth quota. Quota will be replenished in 00:04:50.',
    );
    expect(header(refused.response, 'Retry-After')).toEqual(['290']);
  });

  it('increment-condition decides on the response; a window that never renews says so', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound:
          '<quota-by-key calls="1" renewal-period="0" counter-key="k" increment-condition="@(context.Response.StatusCode == 200)" />',
      }),
    );
    for (let i = 0; i < 3; i++)
      expect((await runAll(p, request(), services, { status: 500 })).forwarded).toBe(true);
    expect((await runAll(p, request(), services, { status: 200 })).response.status).toBe(200);
    const refused = await runAll(p, request(), services);
    expect(refused.response.status).toBe(403);
    expect(header(refused.response, 'Retry-After')).toEqual([]);
    expect(JSON.parse(refused.response.body.toString()).message).toBe('Out of call volume quota.');
  });

  it('prints days in the time to renewal as .NET does', async () => {
    const { timeSpan } = await import('../../../../src/policy/shared/quota-counting.js');
    expect(timeSpan(5 * 86_400 + 3 * 3600 + 23 * 60 + 11)).toBe('5.03:23:11');
    expect(timeSpan(59)).toBe('00:00:59');
  });
});
