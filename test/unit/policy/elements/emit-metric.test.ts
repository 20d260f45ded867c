import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('emit-metric', () => {
  it('emits name, namespace, value and dimensions (defaults filled from the request)', async () => {
    const services = fakeServices();
    await inbound(
      `<emit-metric name="calls" namespace="shop" value="@(2.5)">
         <dimension name="API ID" />
         <dimension name="Client" value="@(context.Request.IpAddress)" />
       </emit-metric>`,
      { api: { id: 'orders' }, clientIp: '10.0.0.9' },
      services,
    );
    expect(services.metrics.emitted).toEqual([
      {
        name: 'calls',
        namespace: 'shop',
        value: 2.5,
        dimensions: [
          ['API ID', 'orders'],
          ['Client', '10.0.0.9'],
        ],
      },
    ]);
  });

  it('defaults to the API Management namespace and value 1', async () => {
    const services = fakeServices();
    await inbound('<emit-metric name="hits" />', {}, services);
    expect(services.metrics.emitted).toEqual([
      { name: 'hits', namespace: 'API Management', value: 1, dimensions: [] },
    ]);
  });

  it('writes the metric to the log when no metric sink is configured', async () => {
    const services = fakeServices();
    await inbound('<emit-metric name="hits" />', {}, { ...services, metrics: undefined as never });
    expect(services.logs).toEqual([
      {
        level: 'info',
        message: 'emit-metric',
        fields: { metric: { name: 'hits', namespace: 'API Management', value: 1, dimensions: [] } },
      },
    ]);
  });

  it('needs a value for custom dimensions and allows at most 10', () => {
    expect(diagnosticsOf('<emit-metric name="m"><dimension name="Color" /></emit-metric>')[0]).toContain(
      'emit-metric/dimension "Color" needs a value',
    );
    const eleven = Array.from({ length: 11 }, (_, i) => `<dimension name="d${i}" value="v" />`).join('');
    expect(diagnosticsOf(`<emit-metric name="m">${eleven}</emit-metric>`)[0]).toContain(
      'accepts at most 10 <dimension>',
    );
  });
});
