import { describe, expect, it } from 'vitest';
import { AddressPolicy } from '../../../src/auth/client-documents/address.js';
import { cacheLifetime } from '../../../src/auth/client-documents/directory.js';
import {
  clientFromDocument,
  isUrlClientId,
  parseClientIdUrl,
} from '../../../src/auth/client-documents/document.js';

describe('AddressPolicy (where a client metadata document may be fetched from)', () => {
  const strict = new AddressPolicy();

  it.each([
    ['93.184.215.14', true],
    ['2606:4700::6810:84e5', true],
    ['127.0.0.1', false],
    ['::1', false],
    ['10.0.0.1', false],
    ['172.16.5.4', false],
    ['192.168.1.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['fd00::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['2002:a00:1::', false],
    ['not an address', false],
  ])('%s → %s', (address, allowed) => {
    expect(strict.permits(address)).toBe(allowed);
  });

  it('lets a development configuration allow listed networks only', () => {
    const development = new AddressPolicy(['127.0.0.1/32', 'fd00::/8']);
    expect(development.permits('127.0.0.1')).toBe(true);
    expect(development.permits('::ffff:127.0.0.1')).toBe(true);
    expect(development.permits('127.0.0.2')).toBe(false);
    expect(development.permits('fd12::1')).toBe(true);
    expect(development.permits('10.0.0.1')).toBe(false);
    expect(AddressPolicy.firstInvalid(['127.0.0.1/32', '10.0.0.0/33'])).toBe(1);
  });
});

describe('cacheLifetime (RFC 9111 freshness, bounded)', () => {
  const bounds = { defaultSeconds: 300, maxSeconds: 86400 };
  it.each([
    [undefined, 300],
    ['public, max-age=60', 60],
    ['max-age="120"', 120],
    ['max-age=999999999', 86400],
    ['no-store', 0],
    ['max-age=600, no-cache', 0],
    ['private', 300],
  ])('%j → %d s', (header, seconds) => {
    expect(cacheLifetime(header, bounds)).toBe(seconds);
  });
});

describe('client_id URLs and documents', () => {
  it('tells URL client ids from registered ones', () => {
    expect(isUrlClientId('https://app.example/client.json')).toBe(true);
    expect(isUrlClientId('http://app.example/client.json')).toBe(true);
    expect(isUrlClientId('Zm9vYmFyYmF6cXV4cXV1eA')).toBe(false);
  });

  it.each([
    ['http://app.example/c.json', 'must use https'],
    ['https://app.example', 'must have a path'],
    ['https://app.example/', 'must have a path'],
    ['https://app.example/a/%2e%2e/c.json', 'path segments'],
    ['https://app.example/./c.json', 'path segments'],
    ['https://u:p@app.example/c.json', 'user information'],
    ['https://app.example/c.json#f', 'fragment'],
    [`https://app.example/${'a'.repeat(2100)}`, 'at most 2048 characters'],
  ])('refuses %s', (url, message) => {
    expect(() => parseClientIdUrl(url)).toThrow(message);
  });

  it('accepts a query and a port', () => {
    expect(parseClientIdUrl('https://app.example:8443/c.json?v=2').port).toBe('8443');
  });

  it('ignores the document’s scope (it may name other servers’ scopes) and defaults to a public client', () => {
    const url = 'https://app.example/c.json';
    const client = clientFromDocument(
      url,
      JSON.stringify({
        client_id: url,
        redirect_uris: ['https://app.example/cb'],
        scope: 'openid other:thing',
      }),
      ['read:courses-work'],
      1000,
    );
    expect(client).toEqual({
      clientId: url,
      issuedAt: 1000,
      secretExpiresAt: 0,
      metadata: {
        redirect_uris: ['https://app.example/cb'],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        application_type: 'web',
      },
    });
  });

  it.each([
    [{ token_endpoint_auth_method: 'private_key_jwt' }, 'is not supported here (supported: none)'],
    [{ token_endpoint_auth_method: 'client_secret_jwt' }, 'must not use a shared secret'],
    [{ client_secret_expires_at: 0 }, 'must not contain client_secret_expires_at'],
    [{ redirect_uris: [] }, 'redirect_uris must be a non-empty array'],
  ])('refuses %j', (extra, message) => {
    const url = 'https://app.example/c.json';
    const text = JSON.stringify({ client_id: url, redirect_uris: ['https://app.example/cb'], ...extra });
    expect(() => clientFromDocument(url, text, [], 0)).toThrow(message);
  });
});
