import { describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/auth/crypto.js';
import { isKnownSubject, resolveOptions } from '../../../src/auth/options.js';
import { loginPage } from '../../../src/auth/pages.js';
import { resolveUpstream, upstreamSubject } from '../../../src/auth/upstream/options.js';
import { authConfigSchema } from '../../../src/config/service-schema.js';

const PROVIDER = { issuer: 'https://id.example.com', clientId: 'portcullis', clientSecret: 's3cret' };

describe('identityProvider options', () => {
  it('applies defaults and always requests openid first', () => {
    expect(resolveUpstream({ ...PROVIDER, scopes: ['profile', 'openid', 'email'] })).toEqual({
      id: 'oidc',
      name: 'id.example.com',
      issuer: 'https://id.example.com',
      clientId: 'portcullis',
      clientSecret: 's3cret',
      scopes: ['openid', 'profile', 'email'],
      timeoutMs: 10_000,
      insecure: false,
    });
    expect(resolveUpstream({ ...PROVIDER, issuer: 'http://127.0.0.1:9000' }).insecure).toBe(true);
  });

  it.each([
    [{ issuer: 'http://id.example.com' }, 'identityProvider.issuer must use https'],
    [{ issuer: 'not a url' }, 'identityProvider.issuer must be an absolute URL'],
    [{ issuer: 'https://id.example.com/?x=1' }, 'identityProvider.issuer must not have a query'],
    [{ id: 'a b' }, 'identityProvider.id must be 1-32 letters'],
    [{ clientId: '' }, 'identityProvider.clientId must be a non-empty string'],
    [{ clientSecret: '' }, 'identityProvider.clientSecret must be a non-empty string'],
    [{ scopes: ['open id'] }, 'identityProvider.scopes must be an array of scope tokens'],
    [{ extra: 1 }, 'identityProvider.extra is not a known option'],
  ])('refuses %j', (override, message) => {
    expect(() => resolveUpstream({ ...PROVIDER, ...override } as never)).toThrow(message);
  });

  it('maps upstream subjects under the provider id and knows them as signed-in subjects', async () => {
    const options = resolveOptions({
      issuer: 'https://auth.example.com',
      baseUrl: 'https://api.example.com',
      products: ['courses'],
      users: [{ username: 'alice', passwordHash: await hashPassword('pw') }],
      identityProvider: { ...PROVIDER, id: 'corp' },
    });
    expect(upstreamSubject(options.upstream!, '1234')).toBe('corp|1234');
    expect(isKnownSubject(options, 'corp|1234')).toBe(true);
    expect(isKnownSubject(options, 'alice')).toBe(true);
    expect(isKnownSubject(options, 'other|1234')).toBe(false);
    expect(options.endpoints.upstreamStart).toBe('https://api.example.com/v1/authorize/upstream');
    expect(options.endpoints.upstreamCallback).toBe('https://api.example.com/v1/authorize/upstream/callback');
  });

  it('refuses a configured user name that an upstream subject could take', async () => {
    expect(() =>
      resolveOptions({
        issuer: 'https://auth.example.com',
        baseUrl: 'https://api.example.com',
        products: ['courses'],
        users: [
          {
            username: 'oidc|1234',
            passwordHash:
              'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
          },
        ],
        identityProvider: PROVIDER,
      }),
    ).toThrow('auth options: users "oidc|1234" would be confused with a user of identityProvider "oidc"');
  });

  it('without a provider, no upstream subject is known', async () => {
    const options = resolveOptions({
      issuer: 'https://auth.example.com',
      baseUrl: 'https://api.example.com',
      products: ['courses'],
      users: [],
    });
    expect(options.upstream).toBeUndefined();
    expect(isKnownSubject(options, 'oidc|1234')).toBe(false);
  });
});

describe('auth.identityProvider in the configuration', () => {
  const base = { issuer: 'https://auth.example.com', baseUrl: 'https://api.example.com' };

  it('accepts an inline secret or one named by environment variable, with defaults', () => {
    const parsed = authConfigSchema.parse({
      ...base,
      identityProvider: {
        issuer: 'https://id.example.com',
        clientId: 'c',
        clientSecret: { env: 'IDP_SECRET' },
      },
    });
    expect(parsed.identityProvider).toEqual({
      id: 'oidc',
      issuer: 'https://id.example.com',
      clientId: 'c',
      clientSecret: { env: 'IDP_SECRET' },
      scopes: ['openid', 'profile'],
    });
  });

  it('names the path of a mistake', () => {
    const result = authConfigSchema.safeParse({
      ...base,
      identityProvider: { issuer: 'http://id.example.com', clientId: 'c', clientSecret: 's', tenant: 'x' },
    });
    expect(result.success).toBe(false);
    const issues = result.error!.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    expect(issues).toContain(
      'identityProvider.issuer: must use https (http is allowed only on a loopback host, for development)',
    );
    expect(issues.some((i) => i.startsWith('identityProvider:') && i.includes('tenant'))).toBe(true);
  });
});

describe('login page', () => {
  it('offers the provider with the interaction and CSRF token, escaped', () => {
    const { html } = loginPage({
      action: 'https://api.example.com/v1/authorize/login',
      interaction: 'i1',
      csrf: 'c1',
      clientName: 'App',
      upstream: { action: 'https://api.example.com/v1/authorize/upstream', name: 'Corp <ID>' },
      passwords: false,
    });
    expect(html).toContain(
      '<form method="post" action="https://api.example.com/v1/authorize/upstream" id="upstream">',
    );
    expect(html).toContain('<input type="hidden" name="csrf" value="c1">');
    expect(html).toContain('Sign in with Corp &#60;ID&#62;');
    expect(html).not.toContain('name="password"');
  });
});
