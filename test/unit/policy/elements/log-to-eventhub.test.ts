import { describe, expect, it } from 'vitest';
import { fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('log-to-eventhub', () => {
  it('appends the message to the logger stream with its partition key', async () => {
    const services = fakeServices();
    await inbound(
      '<log-to-eventhub logger-id="audit" partition-key="@(context.Request.IpAddress)">@(context.Request.Method + " " + context.Request.Url.Path)</log-to-eventhub>',
      { clientIp: '10.1.1.1', url: 'https://gw/orders' },
      services,
    );
    await new Promise((r) => setImmediate(r));
    expect(services.events).toEqual([
      { loggerId: 'audit', message: 'GET /orders', partition: { key: '10.1.1.1' } },
    ]);
  });

  it('never fails the request when the sink fails', async () => {
    const { outcome, services } = await inbound(
      '<log-to-eventhub logger-id="broken" partition-id="1">x</log-to-eventhub>',
    );
    await new Promise((r) => setImmediate(r));
    expect(outcome.kind).toBe('forward');
    expect(services.logs.map((l) => l.message)).toEqual(['log-to-eventhub failed']);
  });

  it('takes partition-id or partition-key, not both, and a literal logger-id', () => {
    expect(
      diagnosticsOf('<log-to-eventhub logger-id="a" partition-id="1" partition-key="k">x</log-to-eventhub>'),
    ).toEqual([
      'policies/inbound/log-to-eventhub[1]: log-to-eventhub takes partition-id or partition-key, got both',
    ]);
    expect(diagnosticsOf('<log-to-eventhub logger-id="@(1)">x</log-to-eventhub>')[0]).toContain(
      'does not allow policy expressions',
    );
  });
});
