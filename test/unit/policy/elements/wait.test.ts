import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('wait', () => {
  it('runs its requests in parallel and waits for all of them', async () => {
    const services = fakeServices();
    services.route('https://a.example.com/', { body: 'A' });
    services.route('https://b.example.com/', { body: 'B' });
    const { context } = await inbound(
      `<wait for="all">
         <send-request response-variable-name="a"><set-url>https://a.example.com/</set-url></send-request>
         <send-request response-variable-name="b"><set-url>https://b.example.com/</set-url></send-request>
         <cache-lookup-value key="k" default-value="d" variable-name="c" />
       </wait>`,
      {},
      services,
    );
    expect(services.fetched.map((f) => f.url).sort()).toEqual([
      'https://a.example.com/',
      'https://b.example.com/',
    ]);
    expect(['a', 'b', 'c'].map((v) => context.variables.has(v))).toEqual([true, true, true]);
  });

  it('accepts only send-request, cache-lookup-value and choose', () => {
    expect(diagnosticsOf('<wait><set-variable name="a" value="1" /></wait>')).toEqual([
      'policies/inbound/wait[1]: <wait> runs only send-request, cache-lookup-value and choose, got <set-variable>',
    ]);
  });
});
