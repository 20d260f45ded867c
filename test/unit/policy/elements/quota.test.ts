import { describe, expect, it } from 'vitest';
import { buildPipeline } from '../../../../src/policy/pipeline.js';
import { compileAt, fakeServices, policies, request, runAll } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('quota', () => {
  it('counts calls per subscription in windows starting at the subscription start', async () => {
    const pipeline = buildPipeline({
      product: compileAt(policies({ inbound: '<quota calls="1" renewal-period="86400" />' }), 'product'),
    });
    const services = fakeServices();
    services.now = Date.parse('2025-03-10T12:00:00Z');
    const sub = { id: 's1', startDate: new Date('2025-03-01T06:00:00Z') };
    expect((await runAll(pipeline, request({ subscription: sub }), services)).response.status).toBe(200);
    const refused = await runAll(pipeline, request({ subscription: sub }), services);
    expect(refused.response.status).toBe(403);
    expect(refused.run.context.lastError?.reason).toBe('QuotaExceeded');
    expect(refused.response.headers).toContainEqual(['Retry-After', String(18 * 3600)]);
    services.now = Date.parse('2025-03-11T06:00:00Z');
    expect((await runAll(pipeline, request({ subscription: sub }), services)).response.status).toBe(200);
  });

  it('is allowed at product scope only', () => {
    expect(diagnosticsOf('<quota calls="1" renewal-period="0" />', 'inbound', 'api')[0]).toContain(
      '<quota> is not allowed at api scope (allowed: product), got it at api scope',
    );
  });
});
