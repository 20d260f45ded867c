import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';

describe('cache-lookup-value', () => {
  it('reads a cached value into a variable', async () => {
    const services = fakeServices();
    services.values.set('token-u1', { value: 'abc', ttl: 60 });
    const { context } = await inbound(
      '<cache-lookup-value key="@(&quot;token-&quot; + &quot;u1&quot;)" variable-name="t" />',
      {},
      services,
    );
    expect(context.variables.get('t')).toBe('abc');
  });

  it('uses default-value on a miss, and leaves the variable unset without one', async () => {
    const withDefault = await inbound(
      '<cache-lookup-value key="k" default-value="none" variable-name="t" />',
    );
    expect(withDefault.context.variables.get('t')).toBe('none');
    const without = await inbound('<cache-lookup-value key="k" variable-name="t" />');
    expect(without.context.variables.has('t')).toBe(false);
  });
});
