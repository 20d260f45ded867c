import { describe, expect, it } from 'vitest';
import { Catalog } from '../../../src/catalog/catalog.js';
import { compileUrlTemplate, UrlTemplateError } from '../../../src/catalog/url-template.js';

const q = (query = '') => new URLSearchParams(query);

describe('URL templates', () => {
  it.each([
    ['/api/Course', '/api/Course', {}],
    ['/api/Course', '/api/course', {}],
    ['/api/Course', '/api/Course/', {}],
    ['/api/Course/{id}', '/api/Course/42', { id: '42' }],
    ['/api/Course/{id}/students/{sid}', '/api/Course/4/students/x y', { id: '4', sid: 'x y' }],
    ['/files/{*path}', '/files/a/b/c.txt', { path: 'a/b/c.txt' }],
    ['/files/{*path}', '/files/', { path: '' }],
    ['/files/*', '/files/a/b/c.txt', {}],
    ['/*', '/anything/at/all', {}],
    ['/*', '/', {}],
    ['/report.{format}', '/report.json', { format: 'json' }],
  ])('%s matches %s', (template, path, parameters) => {
    expect(compileUrlTemplate(template).match(path, q())).toEqual(parameters);
  });

  it.each([
    ['/api/Course', '/api/Courses'],
    ['/api/Course', '/api/Course/1'],
    ['/api/Course/{id}', '/api/Course'],
    ['/api/Course/{id}', '/api/Course/'],
    ['/report.{format}', '/report.'],
  ])('%s does not match %s', (template, path) => {
    expect(compileUrlTemplate(template).match(path, q())).toBeUndefined();
  });

  it('requires and captures query parameters of a query template', () => {
    const template = compileUrlTemplate('/search?q={term}&page={page}');
    expect(template.match('/search', q('q=envoy&page=2&extra=1'))).toEqual({ term: 'envoy', page: '2' });
    expect(template.match('/search', q('q=envoy'))).toBeUndefined();
    expect(template.parameters).toEqual(['term', 'page']);
  });

  it.each([
    ['api/Course', 'must start with "/"'],
    ['/files/{*rest}/more', 'must be the last segment'],
    ['/files/*/more', '"*" must be the last segment'],
    ['/a/{id}/{id}', 'parameter "id" appears twice'],
    ['/a/{id', 'malformed segment "{id"'],
    ['/a?x=1', 'must look like key={name}'],
  ])('rejects %s', (template, message) => {
    expect(() => compileUrlTemplate(template)).toThrow(UrlTemplateError);
    expect(() => compileUrlTemplate(template)).toThrow(message);
  });

  it('ranks literal segments above parameters above wildcards', () => {
    const literal = compileUrlTemplate('/api/Course/new').specificity;
    const parameter = compileUrlTemplate('/api/Course/{id}').specificity;
    const wildcard = compileUrlTemplate('/api/Course/{*rest}').specificity;
    expect(literal).toBeGreaterThan(parameter);
    expect(parameter).toBeGreaterThan(wildcard);
  });
});

describe('catalog matching', () => {
  const catalog = new Catalog<string>([
    {
      id: 'courses',
      urlSuffix: 'courses',
      serviceUrl: 'http://b',
      apiPipeline: 'api',
      operations: [
        { id: 'by-id', method: 'GET', urlTemplate: '/api/Course/{id}', pipeline: 'by-id' },
        { id: 'new', method: 'GET', urlTemplate: '/api/Course/new', pipeline: 'new' },
        { id: 'create', method: 'POST', urlTemplate: '/api/Course', pipeline: 'create' },
      ],
    },
    { id: 'v1', urlSuffix: 'v1', serviceUrl: 'http://b', apiPipeline: 'v1', operations: [] },
    {
      id: 'v1-courses',
      urlSuffix: 'v1/courses',
      serviceUrl: 'http://b',
      apiPipeline: 'v1c',
      operations: [{ id: 'all', method: 'GET', urlTemplate: '/{*rest}', pipeline: 'all' }],
    },
    {
      id: 'hosted',
      urlSuffix: 'courses',
      serviceUrl: 'http://b',
      hostnames: ['API.example.com'],
      apiPipeline: 'hosted',
      operations: [],
    },
  ]);

  it('picks the most specific template, with its parameters', () => {
    const match = catalog.match('gw', 'GET', '/courses/api/Course/new', q());
    expect(match.kind === 'operation' && match.operation.id).toBe('new');
    const byId = catalog.match('gw', 'get', '/courses/api/Course/7', q());
    expect(byId).toMatchObject({ kind: 'operation', parameters: { id: '7' }, apiPath: '/api/Course/7' });
  });

  it('decodes the path before matching', () => {
    expect(catalog.match('gw', 'GET', '/courses/api/Course/a%20b', q())).toMatchObject({
      parameters: { id: 'a b' },
    });
  });

  it('tells an unknown operation of a known API from an unknown API', () => {
    expect(catalog.match('gw', 'DELETE', '/courses/api/Course/7', q())).toMatchObject({
      kind: 'no-operation',
      api: { id: 'courses' },
    });
    expect(catalog.match('gw', 'GET', '/coursesX/api', q())).toEqual({ kind: 'no-api' });
  });

  it('prefers the longest URL suffix and the API bound to the request host', () => {
    expect(catalog.match('gw', 'GET', '/v1/courses/x', q())).toMatchObject({ api: { id: 'v1-courses' } });
    expect(catalog.match('gw', 'GET', '/v1/other', q())).toMatchObject({ api: { id: 'v1' } });
    expect(catalog.match('api.example.com:8080', 'GET', '/courses/x', q())).toMatchObject({
      api: { id: 'hosted' },
    });
  });
});
