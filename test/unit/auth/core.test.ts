import { describe, expect, it } from 'vitest';
import { hashPassword, parsePasswordHash, verifyPassword } from '../../../src/auth/crypto.js';
import { resolveOptions } from '../../../src/auth/options.js';
import { pkceMatches } from '../../../src/auth/pkce.js';
import { createMemoryStores } from '../../../src/auth/stores/memory.js';

const HASH = 'scrypt$16384$8$1$AQEBAQEBAQEBAQEBAQEBAQ$AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI';

describe('passwords', () => {
  it('hashes in the documented format and verifies', async () => {
    const hash = await hashPassword('s3cret');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('s3cret', hash)).toBe(true);
    expect(await verifyPassword('s3cret ', hash)).toBe(false);
  });

  it('refuses malformed or out-of-range hashes', () => {
    expect(() => parsePasswordHash('plain')).toThrow('passwordHash must look like scrypt$N$r$p$salt$key');
    expect(() => parsePasswordHash(HASH.replace('16384', '1000'))).toThrow(
      'out-of-range scrypt parameters N=1000',
    );
  });
});

describe('PKCE', () => {
  it('checks S256 and plain (RFC 7636 appendix B vector)', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    expect(pkceMatches('S256', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', verifier)).toBe(true);
    expect(pkceMatches('plain', verifier, verifier)).toBe(true);
    expect(pkceMatches('plain', 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', verifier)).toBe(false);
  });
});

describe('resolveOptions', () => {
  const base = {
    issuer: 'https://auth.example',
    baseUrl: 'https://mcp.example/',
    products: ['courses'],
    users: [],
  };

  it('derives endpoints, scopes and the default resource', () => {
    const o = resolveOptions(base);
    expect(o.endpoints).toMatchObject({
      authorization: 'https://mcp.example/v1/authorize',
      token: 'https://auth.example/v1/token',
      registration: 'https://auth.example/v1/register',
    });
    expect(o.resources).toEqual(['https://mcp.example/v1/mcp']);
    expect(o.scopes).toEqual(['read:courses-work', 'write:courses-work']);
    expect(o.metadataPaths).toEqual(['/.well-known/oauth-authorization-server']);
    expect(resolveOptions({ ...base, issuer: 'https://auth.example/t1' }).metadataPaths).toEqual([
      '/.well-known/oauth-authorization-server/t1',
      '/.well-known/oauth-authorization-server',
    ]);
  });

  it.each([
    [
      { issuer: 'http://auth.example' },
      'auth options: issuer must use https (http is allowed only on a loopback host), got "http://auth.example"',
    ],
    [
      { issuer: 'https://auth.example?x=1' },
      'auth options: issuer must not have a query or fragment, got "https://auth.example?x=1"',
    ],
    [
      { products: ['bad name'] },
      'auth options: products[0] must be a product name of letters, digits, ".", "_" or "-", got "bad name"',
    ],
    [
      { users: [{ username: 'a', passwordHash: 'x' }] },
      'auth options: users[0].passwordHash passwordHash must look like scrypt$N$r$p$salt$key (see hashPassword())',
    ],
    [
      { codeTtlSeconds: 3600 },
      'auth options: codeTtlSeconds must be at most 600 (OAuth 2.1 §4.1.2), got 3600',
    ],
    [{ limits: { nope: 1 } }, 'auth options: limits.nope is not a known limit'],
    [{ colour: 'red' }, 'auth options: colour is not a known option'],
  ])('refuses %j', (override, message) => {
    expect(() => resolveOptions({ ...base, ...override } as never)).toThrow(message);
  });

  it('accepts valid users', () => {
    expect(resolveOptions({ ...base, users: [{ username: 'a', passwordHash: HASH }] }).users.has('a')).toBe(
      true,
    );
  });
});

describe('memory stores', () => {
  it('consumes a code exactly once, even under concurrent callers', async () => {
    let now = 1000;
    const stores = createMemoryStores(() => now);
    await stores.codes.put({ id: 'c', expiresAt: 1060, consumed: false } as never);
    const results = await Promise.all(Array.from({ length: 5 }, () => stores.codes.consume('c')));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await stores.codes.find('c'))!.consumed).toBe(true);
    now = 1060;
    expect(await stores.codes.find('c')).toBeUndefined();
    await stores.close();
  });

  it('revokes a grant with its live access tokens and refuses new ones afterwards', async () => {
    const now = 1000;
    const stores = createMemoryStores(() => now);
    await stores.grants.put({ id: 'g', expiresAt: 5000, revoked: false } as never);
    expect(await stores.grants.addAccessToken('g', 'old', 999)).toBe(true);
    expect(await stores.grants.addAccessToken('g', 'live', 2000)).toBe(true);
    expect(await stores.grants.revoke('g')).toEqual([{ jti: 'live', expiresAt: 2000 }]);
    expect(await stores.grants.addAccessToken('g', 'late', 2000)).toBe(false);
    expect((await stores.grants.get('g'))!.revoked).toBe(true);
    await stores.close();
  });

  it('counts in fixed windows', async () => {
    let now = 0;
    const stores = createMemoryStores(() => now);
    expect((await stores.counters.increment('k', 10)).count).toBe(1);
    expect(await stores.counters.increment('k', 10)).toEqual({ count: 2, resetAt: 10 });
    now = 10;
    expect((await stores.counters.increment('k', 10)).count).toBe(1);
    await stores.close();
  });

  it('hands out frozen records so callers cannot mutate stored state', async () => {
    const stores = createMemoryStores(() => 0);
    const input = { id: 's', expiresAt: 10 };
    await stores.sessions.set('s', input, 10);
    (input as { sub?: string }).sub = 'mallory'; // the caller's object is not the stored one
    const session = (await stores.sessions.get('s'))!;
    expect(() => {
      (session as { sub?: string }).sub = 'mallory';
    }).toThrow(TypeError);
    expect((await stores.sessions.get('s'))!.sub).toBeUndefined();
    await stores.close();
  });
});
