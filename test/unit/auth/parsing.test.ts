import { describe, expect, it } from 'vitest';
import { parseForm } from '../../../src/auth/body.js';
import { presentedCredentials } from '../../../src/auth/client-auth.js';
import { redirectUriMatches, resolveRedirectUri, validateClientMetadata } from '../../../src/auth/clients.js';
import { OAuthError, sanitizeDescription } from '../../../src/auth/errors.js';
import type { ClientRecord } from '../../../src/auth/stores/types.js';

const SCOPES = ['read:courses-work', 'write:courses-work'];

function thrown(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (err) {
    if (err instanceof OAuthError) return err;
    throw err;
  }
  throw new Error('did not throw');
}

describe('parseForm', () => {
  it('decodes + as space and percent escapes, and drops empty values', () => {
    const form = parseForm('a=b+c&d=%26%3D&e=&f');
    expect([...form]).toEqual([
      ['a', 'b c'],
      ['d', '&='],
    ]);
  });

  it.each([
    ['repeated names', 'a=1&a=2', "parameter 'a' is repeated"],
    ['repeated empty and full', 'a=&a=2', "parameter 'a' is repeated"],
    ['malformed escape', 'a=%zz', 'malformed percent-encoding in the request'],
    ['escaped invalid UTF-8', 'a=%ff', 'malformed percent-encoding in the request'],
  ])('refuses %s', (_name, body, message) => {
    const err = thrown(() => parseForm(body));
    expect({ code: err.code, message: err.message }).toEqual({ code: 'invalid_request', message });
  });

  it('refuses raw bytes that are not UTF-8', () => {
    expect(thrown(() => parseForm(Buffer.from([0x61, 0x3d, 0xc3]))).message).toBe(
      'request body is not valid UTF-8',
    );
  });

  it('keeps bracket and dot names literal instead of building objects', () => {
    expect([...parseForm('code[]=1&code.a=2')]).toEqual([
      ['code[]', '1'],
      ['code.a', '2'],
    ]);
  });
});

describe('presentedCredentials', () => {
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

  it('form-decodes Basic credentials (RFC 6749 Appendix B)', () => {
    const creds = presentedCredentials(basic('my%3Aclient', 'p%2Bq+r%25'), new Map());
    expect(creds).toEqual({ method: 'client_secret_basic', clientId: 'my:client', secret: 'p+q r%' });
  });

  it('reads client_secret_post and none from the body', () => {
    expect(
      presentedCredentials(
        undefined,
        new Map([
          ['client_id', 'c'],
          ['client_secret', 's'],
        ]),
      ),
    ).toEqual({
      method: 'client_secret_post',
      clientId: 'c',
      secret: 's',
    });
    expect(presentedCredentials(undefined, new Map([['client_id', 'c']]))).toEqual({
      method: 'none',
      clientId: 'c',
    });
  });

  it.each([
    ['Basic plus body secret', basic('c', 's'), [['client_secret', 's']], 'invalid_request', 400],
    ['Basic and a different body client_id', basic('c', 's'), [['client_id', 'd']], 'invalid_request', 400],
    ['non-base64 Basic', 'Basic ***', [], 'invalid_request', 400],
    ['Basic without a colon', `Basic ${Buffer.from('abc').toString('base64')}`, [], 'invalid_client', 401],
    ['malformed escape in Basic', basic('c', '%zz'), [], 'invalid_request', 400],
    ['nothing at all', undefined, [], 'invalid_client', 401],
  ] as const)('refuses %s', (_name, header, body, code, status) => {
    const err = thrown(() => presentedCredentials(header, new Map(body as unknown as [string, string][])));
    expect({ code: err.code, status: err.status }).toEqual({ code, status });
  });
});

describe('redirectUriMatches', () => {
  it.each([
    ['http://127.0.0.1/cb', 'http://127.0.0.1:50123/cb', true],
    ['http://127.0.0.1:1234/cb', 'http://127.0.0.1:50123/cb', true],
    ['http://[::1]/cb', 'http://[::1]:8080/cb', true],
    ['http://localhost:1/cb', 'http://localhost:2/cb', true],
    ['http://127.0.0.1:1/cb?a=1', 'http://127.0.0.1:2/cb?a=1', true],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:99999/cb', false],
    ['http://127.0.0.1/cb', 'http://127.0.0.1:5/cb/', false],
    ['http://127.0.0.1/cb', 'http://localhost:5/cb', false],
    ['http://127.0.0.1/cb', 'https://127.0.0.1:5/cb', false],
    ['http://127.0.0.1/cb', 'http://127.0.0.1.evil.example:5/cb', false],
    ['https://app.example/cb', 'https://app.example:443/cb', false],
    ['https://app.example/cb', 'https://app.example/cb', true],
  ])('%s vs %s → %s', (registered, requested, expected) => {
    expect(redirectUriMatches(registered, requested)).toBe(expected);
  });

  it('resolves an omitted redirect_uri only when exactly one is registered', () => {
    const client = (uris: string[]) => ({ metadata: { redirect_uris: uris } }) as unknown as ClientRecord;
    expect(resolveRedirectUri(client(['https://a.example/cb']), undefined)).toBe('https://a.example/cb');
    expect(
      resolveRedirectUri(client(['https://a.example/cb', 'https://a.example/2']), undefined),
    ).toBeUndefined();
  });
});

describe('validateClientMetadata', () => {
  it('applies RFC 7591 defaults and keeps only known fields', () => {
    expect(validateClientMetadata({ redirect_uris: ['https://a.example/cb'], extra: 1 }, SCOPES)).toEqual({
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      application_type: 'web',
    });
  });

  it.each([
    [
      { redirect_uris: ['http://10.0.0.1/cb'] },
      'invalid_redirect_uri',
      "redirect_uris[0] must use https, or http on 127.0.0.1, [::1] or localhost; got 'http://10.0.0.1/cb'",
    ],
    [
      { redirect_uris: ['https://u:p@a.example/cb'] },
      'invalid_redirect_uri',
      'redirect_uris[0] must not contain user information',
    ],
    [
      { redirect_uris: 'https://a.example/cb' },
      'invalid_redirect_uri',
      'redirect_uris must be a non-empty array',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], grant_types: ['refresh_token'] },
      'invalid_client_metadata',
      'grant_types must include authorization_code',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], client_uri: 'http://a.example' },
      'invalid_client_metadata',
      'client_uri must be an https URI',
    ],
    [
      { redirect_uris: ['https://a.example/cb'], application_type: 'tv' },
      'invalid_client_metadata',
      "application_type must be 'web' or 'native'",
    ],
  ])('refuses %j', (body, code, message) => {
    const err = thrown(() => validateClientMetadata(body, SCOPES));
    expect({ code: err.code, message: err.message }).toEqual({ code, message });
  });
});

describe('error catalog', () => {
  it('keeps error_description within the RFC 6749 character set', () => {
    expect(sanitizeDescription('say "hi" \\ é')).toBe("say 'hi' ' '");
  });

  it('takes the status from the catalog unless overridden', () => {
    expect(new OAuthError('invalid_client', 'x').status).toBe(401);
    expect(new OAuthError('invalid_request', 'x', { status: 413 }).status).toBe(413);
  });
});
