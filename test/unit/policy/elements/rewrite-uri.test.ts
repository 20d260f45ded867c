import { describe, expect, it } from 'vitest';
import { inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const rewrite = async (
  template: string,
  url: string,
  extra = '',
  urlTemplate = '/get?a={b}',
  matchedParameters: Record<string, string> = { b: 'b', id: '7' },
) => {
  const { outcome } = await inbound(`<rewrite-uri template="${template}" ${extra} />`, {
    url,
    operation: { urlTemplate },
    matchedParameters,
  });
  if (outcome.kind !== 'forward') throw new Error('expected forward');
  return outcome.request.pathAndQuery;
};

describe('rewrite-uri', () => {
  it('keeps unmatched query parameters by default (the reference example)', async () => {
    expect(await rewrite('/put', 'https://gw/get?a=b&c=d')).toBe('/put?c=d');
  });

  it('drops them with copy-unmatched-params="false"', async () => {
    expect(await rewrite('/put', 'https://gw/get?a=b&c=d', 'copy-unmatched-params="false"')).toBe('/put');
  });

  it('fills {param}s from the matched parameters, encoded', async () => {
    expect(await rewrite('/v2/items/{id}?x={b}', 'https://gw/get?a=b')).toBe('/v2/items/7?x=b');
  });

  it('encodes a parameter holding "/" or "%" once: %2F and %25 reach the backend, never %252F', async () => {
    const path = (id: string) => rewrite('/v2/items/{id}', 'https://gw/get', '', '/get/{id}', { id });
    expect(await path('a/b')).toBe('/v2/items/a%2Fb');
    expect(await path('50%')).toBe('/v2/items/50%25');
    expect(await path('%2F..%2F')).toBe('/v2/items/%252F..%252F');
  });

  it("forwards a wildcard parameter's rest of the path with its slashes, named {path} or {*path}", async () => {
    const files = (template: string, path: string) =>
      rewrite(template, 'https://gw/files/x?v=2', '', '/files/{*path}', { path });
    expect(await files('/storage/{path}', 'a/b/c.txt')).toBe('/storage/a/b/c.txt?v=2');
    expect(await files('/storage/{*path}', 'a/b/c.txt')).toBe('/storage/a/b/c.txt?v=2');
    // Each segment encoded once: a space or a "%" in a segment, never the separators.
    expect(await files('/storage/{path}', 'my docs/50%.txt')).toBe('/storage/my%20docs/50%25.txt?v=2');
    expect(await files('/storage/{path}', '')).toBe('/storage/?v=2');
  });

  it('takes the whole template from an expression', async () => {
    expect(
      await rewrite(
        '@(&quot;/api/Course/&quot; + context.Request.MatchedParameters[&quot;id&quot;])',
        'https://gw/get',
      ),
    ).toBe('/api/Course/7');
  });

  it('adds a leading slash', async () => {
    expect(await rewrite('api', 'https://gw/x', 'copy-unmatched-params="false"')).toBe('/api');
  });

  it('requires a template', () => {
    expect(diagnosticsOf('<rewrite-uri />')).toEqual([
      'policies/inbound/rewrite-uri[1]: rewrite-uri/@template is required, got no "template" attribute',
    ]);
  });
});
