import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const pathOf = async (statements: string, url = 'https://gw.example.com/p?a=1&b=2') => {
  const { outcome } = await inbound(statements, { url });
  if (outcome.kind !== 'forward') throw new Error('expected forward');
  return outcome.request.pathAndQuery;
};

describe('set-query-parameter', () => {
  it('overrides, appends, skips and deletes', async () => {
    expect(await pathOf('<set-query-parameter name="a"><value>9</value></set-query-parameter>')).toBe(
      '/p?a=9&b=2',
    );
    expect(
      await pathOf(
        '<set-query-parameter name="a" exists-action="append"><value>9</value></set-query-parameter>',
      ),
    ).toBe('/p?a=1&a=9&b=2');
    expect(
      await pathOf(
        '<set-query-parameter name="a" exists-action="skip"><value>9</value></set-query-parameter>',
      ),
    ).toBe('/p?a=1&b=2');
    expect(
      await pathOf(
        '<set-query-parameter name="c" exists-action="skip"><value>9</value></set-query-parameter>',
      ),
    ).toBe('/p?a=1&b=2&c=9');
    expect(await pathOf('<set-query-parameter name="a" exists-action="delete" />')).toBe('/p?b=2');
  });

  it('encodes values and takes them from expressions', async () => {
    expect(
      await pathOf(
        '<set-query-parameter name="q"><value>@("a b&amp;c")</value></set-query-parameter>',
        'https://gw/p',
      ),
    ).toBe('/p?q=a%20b%26c');
  });

  it('is not allowed in outbound', () => {
    expect(
      diagnosticsOf('<set-query-parameter name="a"><value>1</value></set-query-parameter>', 'outbound')[0],
    ).toContain('is not allowed in the outbound section (allowed: inbound, backend)');
  });
});
