import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('trace', () => {
  it('writes source, severity, message and metadata to the trace sink', async () => {
    const { services } = await inbound(
      `<trace source="orders" severity="error">
         <message>@("method " + context.Request.Method)</message>
         <metadata name="op" value="@(context.Operation.Id)" />
       </trace>`,
      { operation: { id: 'get-order' }, requestId: '6f1c3a3e-56a4-4a3e-9a6c-0a7a4b1e9f10' },
    );
    expect(services.traces).toEqual([
      {
        requestId: '6f1c3a3e-56a4-4a3e-9a6c-0a7a4b1e9f10',
        source: 'orders',
        severity: 'error',
        message: 'method GET',
        metadata: [['op', 'get-order']],
      },
    ]);
  });

  it('accepts the older form with the message as text, severity defaulting to verbose', async () => {
    const { services } = await inbound('<trace source="s">plain</trace>');
    expect(services.traces.map((t) => [t.severity, t.message])).toEqual([['verbose', 'plain']]);
  });

  it('needs a message and a literal source', () => {
    expect(diagnosticsOf('<trace source="s" />')).toEqual([
      'policies/inbound/trace[1]: trace needs a <message>, got none',
    ]);
    expect(diagnosticsOf('<trace source="@(1)"><message>m</message></trace>')[0]).toContain(
      'trace/@source does not allow policy expressions',
    );
  });
});
