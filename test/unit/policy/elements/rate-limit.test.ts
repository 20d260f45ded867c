import { describe, expect, it } from 'vitest';
import { buildPipeline } from '../../../../src/policy/pipeline.js';
import { compileAt, fakeServices, policies, request, runAll } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const product = compileAt(
  policies({
    inbound: `<rate-limit calls="3" renewal-period="60">
                <api name="orders" calls="2" renewal-period="60">
                  <operation id="create" calls="1" renewal-period="60" />
                </api>
              </rate-limit>`,
  }),
  'product',
);
const pipeline = buildPipeline({ product });

const call = (services: ReturnType<typeof fakeServices>, api: string, op: string, sub = 's1') =>
  runAll(
    pipeline,
    request({ subscription: { id: sub }, api: { id: api, name: api }, operation: { id: op, name: op } }),
    services,
  ).then((r) => r.response.status);

describe('rate-limit', () => {
  it('limits per subscription, with tighter limits for an API and an operation', async () => {
    const services = fakeServices();
    expect(await call(services, 'orders', 'create')).toBe(200);
    expect(await call(services, 'orders', 'create')).toBe(429);
    expect(await call(services, 'orders', 'list')).toBe(200);
    expect(await call(services, 'orders', 'list')).toBe(429);
    expect(await call(services, 'billing', 'get')).toBe(200);
    expect(await call(services, 'billing', 'get')).toBe(429);
    expect(await call(services, 'billing', 'get', 's2')).toBe(200);
  });

  it('does not apply without a subscription', async () => {
    const services = fakeServices();
    for (let i = 0; i < 5; i++)
      expect((await runAll(pipeline, request(), services)).response.status).toBe(200);
  });

  it('is not allowed at global scope and takes no expressions', () => {
    expect(diagnosticsOf('<rate-limit calls="1" renewal-period="1" />', 'inbound', 'global')[0]).toContain(
      'is not allowed at global scope (allowed: product, api, operation)',
    );
    expect(diagnosticsOf('<rate-limit calls="@(1)" renewal-period="1" />', 'inbound', 'api')[0]).toContain(
      'rate-limit/@calls does not allow policy expressions',
    );
  });
});
