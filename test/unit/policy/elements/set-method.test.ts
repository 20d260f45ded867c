import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

describe('set-method', () => {
  it('changes the method of the forwarded request', async () => {
    const { outcome } = await inbound('<set-method>post</set-method>');
    expect(outcome.kind === 'forward' && outcome.request.method).toBe('POST');
  });

  it('takes the method from an expression', async () => {
    const { context } = await inbound(
      '<set-method>@(context.Request.Headers.GetValueOrDefault("X-M","PUT"))</set-method>',
    );
    expect(context.request.method).toBe('PUT');
  });

  it('rejects an empty or invalid method', () => {
    expect(diagnosticsOf('<set-method />')).toEqual([
      'policies/inbound/set-method[1]: <set-method> must have a value, got an empty element',
    ]);
    expect(diagnosticsOf('<set-method>GET POST</set-method>')).toEqual([
      'policies/inbound/set-method[1]: set-method must be an HTTP method, got "GET POST"',
    ]);
  });
});
