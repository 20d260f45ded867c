import { describe, expect, it } from 'vitest';
import { header, inbound, outbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const headersOf = async (statements: string, headers: [string, string][] = []) => {
  const { outcome } = await inbound(statements, { headers });
  if (outcome.kind !== 'forward') throw new Error('expected forward');
  return outcome.request.headers;
};

describe('set-header', () => {
  it('overrides by default, with several values joined by commas', async () => {
    const h = await headersOf('<set-header name="X-A"><value>1</value><value>2</value></set-header>', [
      ['x-a', 'old'],
    ]);
    expect(h).toContainEqual(['X-A', '1,2']);
    expect(h.filter(([n]) => n.toLowerCase() === 'x-a')).toHaveLength(1);
  });

  it('skips when the header exists and sets it when it does not', async () => {
    const kept = await headersOf(
      '<set-header name="X-A" exists-action="skip"><value>new</value></set-header>',
      [['X-A', 'old']],
    );
    expect(kept).toContainEqual(['X-A', 'old']);
    const set = await headersOf(
      '<set-header name="X-A" exists-action="skip"><value>new</value></set-header>',
    );
    expect(set).toContainEqual(['X-A', 'new']);
  });

  it('appends to existing values', async () => {
    const h = await headersOf('<set-header name="X-A" exists-action="append"><value>b</value></set-header>', [
      ['X-A', 'a'],
    ]);
    expect(h).toContainEqual(['X-A', 'a,b']);
  });

  it('deletes', async () => {
    const h = await headersOf('<set-header name="X-A" exists-action="delete" />', [['X-A', 'a']]);
    expect(h.some(([n]) => n === 'X-A')).toBe(false);
  });

  it('keeps one line per value for headers that may hold commas', async () => {
    const { response } = await outbound(
      '<set-header name="Set-Cookie" exists-action="append"><value>a=1</value><value>b=2</value></set-header>',
    );
    expect(header(response, 'Set-Cookie')).toEqual(['a=1', 'b=2']);
  });

  it('takes name, action and values from expressions', async () => {
    const h = await headersOf(
      '<set-header name="@(&quot;X-&quot; + &quot;M&quot;)" exists-action="@(&quot;override&quot;)"><value>@(context.Request.Method)</value></set-header>',
    );
    expect(h).toContainEqual(['X-M', 'GET']);
  });

  it('changes the response in outbound', async () => {
    const { response } = await outbound('<set-header name="X-Out"><value>o</value></set-header>', {
      headers: [['X-Out', 'b']],
    });
    expect(header(response, 'X-Out')).toEqual(['o']);
  });

  it('refuses to touch transport headers', () => {
    expect(diagnosticsOf('<set-header name="Content-Length"><value>1</value></set-header>')).toEqual([
      'policies/inbound/set-header[1]: set-header/@name cannot change a transport header, got "Content-Length"',
    ]);
  });
});
