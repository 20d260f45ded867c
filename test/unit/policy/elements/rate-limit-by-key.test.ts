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

const limited = pipelineOf(
  policies({
    inbound: `<rate-limit-by-key calls="2" renewal-period="60" counter-key="@(context.Request.IpAddress)"
                remaining-calls-header-name="X-Remaining" total-calls-header-name="X-Total" remaining-calls-variable-name="left" />`,
  }),
);

describe('rate-limit-by-key', () => {
  it('allows calls up to the limit per key, then answers 429 with Retry-After', async () => {
    const services = fakeServices();
    const first = await runAll(limited, request({ clientIp: '10.0.0.1' }), services);
    expect(header(first.response, 'X-Remaining')).toEqual(['1']);
    expect(header(first.response, 'X-Total')).toEqual(['2']);
    expect(first.run.context.variables.get('left')).toBe(1);
    await runAll(limited, request({ clientIp: '10.0.0.1' }), services);
    services.now += 20_000;
    const third = await runAll(limited, request({ clientIp: '10.0.0.1' }), services);
    expect(third.forwarded).toBe(false);
    expect(third.response.status).toBe(429);
    expect(header(third.response, 'Retry-After')).toEqual(['40']);
    expect(JSON.parse(third.response.body.toString()).message).toBe(
      'Rate limit is exceeded. Try again in 40 seconds.',
    );
    expect(third.run.context.lastError?.reason).toBe('RateLimitExceeded');
  });

  it('counts each key separately and forgets calls older than the window', async () => {
    const services = fakeServices();
    for (let i = 0; i < 2; i++) await runAll(limited, request({ clientIp: '10.0.0.1' }), services);
    expect((await runAll(limited, request({ clientIp: '10.0.0.2' }), services)).forwarded).toBe(true);
    services.now += 61_000;
    expect((await runAll(limited, request({ clientIp: '10.0.0.1' }), services)).forwarded).toBe(true);
  });

  it('does not count when increment-condition is false, and counts increment-count', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound:
          '<rate-limit-by-key calls="3" renewal-period="60" counter-key="k" increment-condition="@(context.Request.Method != &quot;OPTIONS&quot;)" increment-count="2" />',
      }),
    );
    for (let i = 0; i < 5; i++) await runAll(p, request({ method: 'OPTIONS' }), services);
    expect((await runAll(p, request(), services)).forwarded).toBe(true);
    expect((await runAll(p, request(), services)).response.status).toBe(429);
  });

  it('increment-condition on the response: only calls it accepts are counted, at the end of the request', async () => {
    const services = fakeServices();
    const p = pipelineOf(
      policies({
        inbound: `<rate-limit-by-key calls="2" renewal-period="60" counter-key="k"
                    increment-condition="@(context.Response.StatusCode >= 200 &amp;&amp; context.Response.StatusCode < 300)"
                    remaining-calls-header-name="X-Remaining" retry-after-variable-name="wait" />`,
      }),
    );
    for (let i = 0; i < 4; i++)
      expect((await runAll(p, request(), services, { status: 503 })).response.status).toBe(503);
    const first = await runAll(p, request(), services, { status: 200 });
    // Remaining as it will be once this call counts.
    expect(header(first.response, 'X-Remaining')).toEqual(['1']);
    services.now += 5_000;
    expect((await runAll(p, request(), services, { status: 204 })).response.status).toBe(204);
    services.now += 5_000;
    const refused = await runAll(p, request(), services);
    expect(refused.response.status).toBe(429);
    expect(header(refused.response, 'Retry-After')).toEqual(['50']);
    expect(refused.run.context.variables.get('wait')).toBe(50);
  });

  it('caps renewal-period at 300 seconds', () => {
    expect(diagnosticsOf('<rate-limit-by-key calls="1" renewal-period="301" counter-key="k" />')).toEqual([
      'policies/inbound/rate-limit-by-key[1]: rate-limit-by-key/@renewal-period must be at most 300, got "301"',
    ]);
  });
});
