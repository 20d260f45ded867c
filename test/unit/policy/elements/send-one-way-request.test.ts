import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';

describe('send-one-way-request', () => {
  it('sends the request and goes on without waiting or failing', async () => {
    const services = fakeServices();
    const { outcome } = await inbound(
      `<send-one-way-request mode="new" timeout="5">
         <set-url>https://hooks.example.com/notify</set-url>
         <set-method>POST</set-method>
         <set-body>@(context.Request.Method)</set-body>
       </send-one-way-request>`,
      {},
      services,
    );
    await new Promise((r) => setImmediate(r));
    expect(outcome.kind).toBe('forward');
    expect(services.fetched.map((f) => [f.method, f.url, f.body?.toString(), f.timeoutMs])).toEqual([
      ['POST', 'https://hooks.example.com/notify', 'GET', 5000],
    ]);
    expect(services.logs.map((l) => l.message)).toEqual(['send-one-way-request failed']);
  });
});
