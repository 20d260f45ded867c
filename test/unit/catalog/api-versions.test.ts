import { describe, expect, it } from 'vitest';
import { type ApiInit, Catalog } from '../../../src/catalog/catalog.js';

/**
 * API Management's Header and Query versioning: versions of one set share a URL suffix and the request names its
 * version in a header or query parameter. No version named: the Original version (""), if the set has one; a version
 * the set does not have: no API (404), never another version.
 */
const q = (text = '') => new URLSearchParams(text);
const withHeaders =
  (headers: Record<string, string>) =>
  (name: string): string | undefined =>
    headers[name];

function version(
  id: string,
  urlSuffix: string,
  selector: ApiInit<string>['version'],
  operations = [{ id: `${id}-get`, method: 'GET', urlTemplate: '/items', pipeline: `${id}-get` }],
): ApiInit<string> {
  return { id, urlSuffix, serviceUrl: `http://${id}`, apiPipeline: id, operations, version: selector };
}

describe('catalog: versions that share a URL suffix', () => {
  const catalog = new Catalog<string>([
    version('orders-original', 'orders', { by: 'header', key: 'Api-Version', name: '' }),
    version('orders-v2', 'orders', { by: 'header', key: 'Api-Version', name: 'v2' }, [
      { id: 'v2-get', method: 'GET', urlTemplate: '/items', pipeline: 'v2-get' },
      { id: 'v2-post', method: 'POST', urlTemplate: '/items', pipeline: 'v2-post' },
    ]),
    version('stock-v1', 'stock', { by: 'query', key: 'api-version', name: '2024-01-01' }),
    version('stock-v2', 'stock', { by: 'query', key: 'api-version', name: '2025-01-01' }),
    { id: 'root', urlSuffix: 'stock/extra', serviceUrl: 'http://root', apiPipeline: 'root', operations: [] },
  ]);

  it('picks the version the header names, the header name read case-insensitively', () => {
    const v2 = catalog.match('gw', 'POST', '/orders/items', q(), {
      header: withHeaders({ 'api-version': 'v2' }),
    });
    expect(v2).toMatchObject({ kind: 'operation', api: { id: 'orders-v2' }, operation: { id: 'v2-post' } });
  });

  it('sends a request that names no version, or an empty one, to the Original version', () => {
    expect(catalog.match('gw', 'GET', '/orders/items', q(), { header: withHeaders({}) })).toMatchObject({
      api: { id: 'orders-original' },
    });
    expect(catalog.match('gw', 'GET', '/orders/items', q())).toMatchObject({
      api: { id: 'orders-original' },
    });
    expect(
      catalog.match('gw', 'GET', '/orders/items', q(), { header: withHeaders({ 'api-version': '' }) }),
    ).toMatchObject({ api: { id: 'orders-original' } });
    // Its own operations only: POST is v2's.
    expect(catalog.match('gw', 'POST', '/orders/items', q())).toMatchObject({
      kind: 'no-operation',
      api: { id: 'orders-original' },
    });
  });

  it('matches no API for a version the set does not have, whatever other versions there are', () => {
    expect(
      catalog.match('gw', 'GET', '/orders/items', q(), { header: withHeaders({ 'api-version': 'V2' }) }),
    ).toEqual({ kind: 'no-version', urlSuffix: 'orders', by: 'header', key: 'Api-Version', requested: 'V2' });
  });

  it('picks the version the query parameter names, and has no default without a version ""', () => {
    expect(catalog.match('gw', 'GET', '/stock/items', q('api-version=2025-01-01&x=1'))).toMatchObject({
      kind: 'operation',
      api: { id: 'stock-v2' },
    });
    expect(catalog.match('gw', 'GET', '/stock/items', q('api-version=2024-01-01'))).toMatchObject({
      api: { id: 'stock-v1' },
    });
    expect(catalog.match('gw', 'GET', '/stock/items', q())).toEqual({
      kind: 'no-version',
      urlSuffix: 'stock',
      by: 'query',
      key: 'api-version',
      requested: undefined,
    });
    // A header of that name is not the query parameter.
    expect(
      catalog.match('gw', 'GET', '/stock/items', q(), {
        header: withHeaders({ 'api-version': '2024-01-01' }),
      }),
    ).toMatchObject({ kind: 'no-version' });
  });

  it('still prefers a longer URL suffix, which is not versioned', () => {
    expect(catalog.match('gw', 'GET', '/stock/extra/x', q())).toMatchObject({ api: { id: 'root' } });
  });

  it('matches a version an operator route names as named, whatever the request says', () => {
    expect(
      catalog.matchNamed('orders-v2', 'GET', '/orders/items', q(), { header: withHeaders({}) }),
    ).toMatchObject({ kind: 'operation', api: { id: 'orders-v2' } });
  });
});
