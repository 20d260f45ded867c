import { describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog.js';
import { normalizeRequestPath, removeDotSegments } from '../../../src/catalog/request-path.js';

describe('normalizeRequestPath', () => {
  it.each([
    ['/courses/api/Course/1', '/courses/api/Course/1'],
    ['/courses/open/../api/Course/1', '/courses/api/Course/1'],
    ['/courses/open/%2e%2e/api/Course/1', '/courses/api/Course/1'],
    ['/courses/open/%2E%2E/api/Course/1', '/courses/api/Course/1'],
    ['/courses/open/.%2E/api/Course/1', '/courses/api/Course/1'],
    ['/courses/open/%2e/x', '/courses/open/x'],
    ['//courses/open/..//api/Course/1', '/courses/api/Course/1'],
    ['/courses/open\\..\\api/Course/1', '/courses/api/Course/1'],
    ['/a/b/c/./../../g', '/a/g'],
    ['/a/b/..', '/a/'],
    ['/a/b/.', '/a/b/'],
    ['/..', '/'],
    ['/../../../etc/passwd', '/etc/passwd'],
    ['/', '/'],
    ['/a//b///c/', '/a/b/c/'],
    // Unreserved characters are decoded (RFC 3986 §6.2.2.2); every other escape is kept as written.
    ['/%61pi/%7E%2D%5F%30', '/api/~-_0'],
    ['/open/api%2fCourse/1', '/open/api%2fCourse/1'],
    ['/open/a%2Fb%5cc', '/open/a%2Fb%5cc'],
    ['/open/%25%20%C3%A9', '/open/%25%20%C3%A9'],
    ['/open/%252e%252e/x', '/open/%252e%252e/x'],
    ['/a.b/..c/c../...', '/a.b/..c/c../...'],
    ['*', '*'],
  ])('%s → %s', (raw, normalized) => {
    expect(normalizeRequestPath(raw)).toEqual({ ok: true, path: normalized });
  });

  it('is idempotent: a normalised path is its own normal form', () => {
    for (const raw of ['/a/./b/../c//d', '/x/%2e%2E/y', '/q/%2F/r', '/%41/%5C']) {
      const once = normalizeRequestPath(raw);
      expect(once.ok).toBe(true);
      if (once.ok) expect(normalizeRequestPath(once.path)).toEqual(once);
    }
  });

  it.each([
    '/open/..%2fapi/Course/1',
    '/open/..%2Fapi/Course/1',
    '/open/%2e%2e%2fapi/Course/1',
    '/open/x%2F..',
    '/open/x%2f.%2fy',
    '/open/..%5capi',
    '/open/..;jsessionid=1/api',
    '/open/.;x/api',
  ])('%s hides a dot-segment: refused', (raw) => {
    expect(normalizeRequestPath(raw)).toMatchObject({ ok: false, reason: 'HiddenDotSegment' });
  });

  it.each(['/open/%zz', '/open/%', '/open/%2', '/open/%2g'])('%s is malformed: refused', (raw) => {
    const result = normalizeRequestPath(raw);
    expect(result).toMatchObject({ ok: false, reason: 'MalformedPercentEncoding' });
    if (!result.ok) expect(result.message).toMatch(/offset \d+/);
  });

  it('keeps the trailing slash of a resolved dot-segment (RFC 3986 §5.2.4)', () => {
    expect(removeDotSegments('/a/b/c/./../../g')).toBe('/a/g');
    expect(removeDotSegments('/mid/content=5/../6')).toBe('/mid/6');
    expect(removeDotSegments('/a/..')).toBe('/');
  });
});

describe('matching a normalised path', () => {
  const catalog = new Catalog<string>([
    {
      id: 'courses',
      urlSuffix: 'courses',
      serviceUrl: 'http://b',
      apiPipeline: 'api',
      operations: [
        { id: 'open', method: 'GET', urlTemplate: '/open/{*rest}', pipeline: 'open' },
        { id: 'course', method: 'GET', urlTemplate: '/api/Course/{id}', pipeline: 'course' },
      ],
    },
  ]);
  const match = (raw: string) => {
    const normalized = normalizeRequestPath(raw);
    if (!normalized.ok) throw new Error(normalized.message);
    return catalog.match('gateway', 'GET', normalized.path, new URLSearchParams());
  };

  it('a dot-segment out of the wildcard lands on the operation it names', () => {
    expect(match('/courses/open/%2e%2e/api/Course/1')).toMatchObject({
      kind: 'operation',
      operation: { id: 'course' },
      parameters: { id: '1' },
    });
  });

  it('an encoded slash belongs to its segment: it is no separator for the template', () => {
    expect(match('/courses/api%2fCourse/1')).toMatchObject({ kind: 'no-operation' });
    expect(match('/courses/api/Course/a%2Fb')).toMatchObject({
      kind: 'operation',
      operation: { id: 'course' },
      parameters: { id: 'a/b' },
    });
    expect(match('/courses/open/a%2fb/c')).toMatchObject({
      kind: 'operation',
      operation: { id: 'open' },
      apiPath: '/open/a%2fb/c',
    });
  });
});
