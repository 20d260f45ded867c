import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';

describe('cache-remove-value', () => {
  it('removes a cached value', async () => {
    const services = fakeServices();
    services.values.set('k', { value: 'v', ttl: 60 });
    services.values.set('other', { value: 'w', ttl: 60 });
    await inbound('<cache-remove-value key="@(&quot;k&quot;)" />', {}, services);
    expect([...services.values.keys()]).toEqual(['other']);
  });
});
