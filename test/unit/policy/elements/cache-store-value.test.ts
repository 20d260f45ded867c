import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';

describe('cache-store-value', () => {
  it("stores the expression's value for the duration", async () => {
    const services = fakeServices();
    await inbound('<cache-store-value key="k" value="@(40 + 2)" duration="@(60 * 5)" />', {}, services);
    expect(services.values.get('k')).toEqual({ value: 42, ttl: 300 });
  });

  it('round-trips through cache-lookup-value', async () => {
    const services = fakeServices();
    await inbound('<cache-store-value key="k" value="v" duration="60" />', {}, services);
    const { context } = await inbound('<cache-lookup-value key="k" variable-name="x" />', {}, services);
    expect(context.variables.get('x')).toBe('v');
  });
});
