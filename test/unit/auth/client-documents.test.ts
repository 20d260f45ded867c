import dns from 'node:dns';
import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AddressPolicy } from '../../../src/auth/client-documents/address.js';
import { isUrlClientId } from '../../../src/auth/client-documents/client-id.js';
import { cacheLifetime } from '../../../src/auth/client-documents/directory.js';
import { clientFromDocument, parseClientIdUrl } from '../../../src/auth/client-documents/document.js';
import { ClientDocumentError } from '../../../src/auth/client-documents/errors.js';
import { fetchDocument } from '../../../src/auth/client-documents/fetch.js';

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

/** The two 16-bit groups of an IPv4 address, as hex, and bit-inverted as Teredo writes its client address. */
function groups(v4: string): { high: string; low: string; invertedHigh: string; invertedLow: string } {
  const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
  const hex = (n: number) => n.toString(16);
  return {
    high: hex((a << 8) | b),
    low: hex((c << 8) | d),
    invertedHigh: hex(~((a << 8) | b) & 0xffff),
    invertedLow: hex(~((c << 8) | d) & 0xffff),
  };
}

/** Every IPv6 form that carries an IPv4 address to it, written as an attacker would. */
const EMBEDDINGS: [string, (v4: string) => string][] = [
  ['IPv4-compatible, dotted', (v4) => `::${v4}`],
  ['IPv4-compatible, as a URL normalises it', (v4) => `::${groups(v4).high}:${groups(v4).low}`],
  ['IPv4-mapped', (v4) => `::ffff:${v4}`],
  ['IPv4-translated', (v4) => `::ffff:0:${groups(v4).high}:${groups(v4).low}`],
  ['NAT64 64:ff9b::/96', (v4) => `64:ff9b::${v4}`],
  ['6to4', (v4) => `2002:${groups(v4).high}:${groups(v4).low}::1`],
  // The RFC 4380 example server 65.54.227.120, cone flag, port 40000 obfuscated.
  [
    'Teredo client',
    (v4) => `2001:0:4136:e378:8000:63bf:${groups(v4).invertedHigh}:${groups(v4).invertedLow}`,
  ],
  ['Teredo server', (v4) => `2001:0:${groups(v4).high}:${groups(v4).low}:8000:63bf:a247:28f1`],
];
const NOT_PUBLIC = ['127.0.0.1', '10.0.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0'];
const PUBLIC = '93.184.215.14';

describe('AddressPolicy: IPv4 addresses written in IPv6', () => {
  const strict = new AddressPolicy();
  const refused = EMBEDDINGS.flatMap(([form, write]) => NOT_PUBLIC.map((v4) => [form, v4, write(v4)]));

  it.each(refused)('refuses %s of %s (%s)', (_form, _v4, address) => {
    expect(strict.permits(address)).toBe(false);
  });

  it.each(EMBEDDINGS)('allows %s of a public address', (_form, write) => {
    expect(strict.permits(write(PUBLIC))).toBe(true);
  });

  it('refuses the local-use NAT64 prefix whatever it carries: where the IPv4 address sits is the operator’s choice', () => {
    expect(strict.permits('64:ff9b:1::7f00:1')).toBe(false);
    expect(strict.permits('64:ff9b:1::5db8:d70e')).toBe(false);
    expect(new AddressPolicy(['64:ff9b:1::/48']).permits('64:ff9b:1::5db8:d70e')).toBe(true);
  });

  it('allows an embedding when a development configuration lists the IPv4 address it reaches', () => {
    const development = new AddressPolicy(['127.0.0.1/32']);
    expect(development.permits('::7f00:1')).toBe(true);
    expect(development.permits('64:ff9b::7f00:1')).toBe(true);
    expect(development.permits('64:ff9b::a00:1')).toBe(false);
  });
});

describe('fetchDocument: the same address rule for a literal host, the DNS answers and the peer', () => {
  const settings = { addresses: new AddressPolicy(), timeoutMs: 2000, maxBytes: 10_000, ca: undefined };
  afterEach(() => vi.restoreAllMocks());

  const refusal = (url: string): Promise<unknown> =>
    fetchDocument(new URL(url), url, settings).catch((e: unknown) => e);

  it.each([
    '[::127.0.0.1]',
    '[::ffff:0:7f00:1]',
    '[64:ff9b::a9fe:a9fe]',
    '[2002:a00:1::1]',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
  ])('refuses https://%s/ without connecting', async (host) => {
    const connect = vi.spyOn(net.Socket.prototype, 'connect');
    const error = await refusal(`https://${host}/client.json`);
    expect(connect).not.toHaveBeenCalled();
    expect(error).toBeInstanceOf(ClientDocumentError);
    expect((error as ClientDocumentError).reason).toBe('address_refused');
  });

  it.each(['::7f00:1', '64:ff9b::a00:1', '2002:c0a8:101::1', '2001:0:4136:e378:8000:63bf:5601:5601'])(
    // The lookup's own refusal ("resolves to"), before a connection, not the check of the connected peer.
    'refuses a name that resolves to %s',
    async (address) => {
      vi.spyOn(dns, 'lookup').mockImplementation(((
        _host: string,
        _options: unknown,
        callback: (error: null, found: dns.LookupAddress[]) => void,
      ) => callback(null, [{ address, family: 6 }])) as unknown as typeof dns.lookup);
      const error = await refusal('https://client.example/client.json');
      expect(error).toBeInstanceOf(ClientDocumentError);
      expect((error as ClientDocumentError).reason).toBe('address_refused');
      expect((error as Error).message).toContain(`resolves to ${address}, which is not a public address`);
    },
  );
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
