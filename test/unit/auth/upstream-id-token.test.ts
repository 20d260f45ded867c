import { createLocalJWKSet, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { IdTokenError, verifyIdToken } from '../../../src/auth/upstream/id-token.js';

const ISSUER = 'https://id.example.com';
const CLIENT = 'portcullis';
const NONCE = 'n-0S6_WzA2Mj';
const NOW = 1_800_000_000;

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let keys: ReturnType<typeof createLocalJWKSet>;
let signingKey: PrivateKey;
let otherKey: PrivateKey;

beforeAll(async () => {
  const pair = await generateKeyPair('ES256', { extractable: true });
  signingKey = pair.privateKey;
  otherKey = (await generateKeyPair('ES256')).privateKey;
  keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' }] });
});

async function idToken(claims: JWTPayload = {}, key: PrivateKey = signingKey): Promise<string> {
  return new SignJWT({
    iss: ISSUER,
    aud: CLIENT,
    sub: '248289761001',
    iat: NOW - 10,
    exp: NOW + 300,
    nonce: NONCE,
    name: 'Bob Upstream',
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(key);
}

const expected = { issuer: ISSUER, clientId: CLIENT, nonce: NONCE, now: NOW };

async function refusal(token: string, options = expected): Promise<IdTokenError> {
  const error = await verifyIdToken(token, keys, options).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(IdTokenError);
  return error as IdTokenError;
}

describe('verifyIdToken', () => {
  it('returns the subject and name of a valid token', async () => {
    expect(await verifyIdToken(await idToken(), keys, expected)).toEqual({
      sub: '248289761001',
      name: 'Bob Upstream',
    });
  });

  it('refuses another nonce', async () => {
    const error = await refusal(await idToken({ nonce: 'another' }));
    expect(error.reason).toBe('nonce');
    expect(error.message).toContain('nonce mismatch');
  });

  it('refuses a token without a nonce', async () => {
    expect((await refusal(await idToken({ nonce: undefined }))).reason).toBe('nonce');
  });

  it('refuses a token for another audience', async () => {
    const error = await refusal(await idToken({ aud: 'someone-else' }));
    expect(error.reason).toBe('claims');
    expect(error.message).toBe('the ID token\'s "aud" claim is not valid (check_failed)');
  });

  it('refuses several audiences unless azp names us', async () => {
    const error = await refusal(await idToken({ aud: [CLIENT, 'other'], azp: 'other' }));
    expect(error.reason).toBe('claims');
    expect(error.message).toContain('azp');
    const ok = await verifyIdToken(await idToken({ aud: [CLIENT, 'other'], azp: CLIENT }), keys, expected);
    expect(ok.sub).toBe('248289761001');
  });

  it('refuses another issuer', async () => {
    const error = await refusal(await idToken({ iss: 'https://evil.example.com' }));
    expect(error.reason).toBe('claims');
    expect(error.message).toContain('"iss"');
  });

  it('refuses an expired token (beyond 30 s of clock skew)', async () => {
    expect((await refusal(await idToken(), { ...expected, now: NOW + 331 })).reason).toBe('expired');
    expect((await verifyIdToken(await idToken(), keys, { ...expected, now: NOW + 320 })).sub).toBe(
      '248289761001',
    );
  });

  it('refuses a token signed by another key', async () => {
    expect((await refusal(await idToken({}, otherKey))).reason).toBe('signature');
  });

  it('refuses alg none and HS256 tokens', async () => {
    const [, payload] = (await idToken()).split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'k1' })).toString('base64url')}.${payload}.`;
    expect(['signature', 'malformed']).toContain((await refusal(none)).reason);
    const hs = await new SignJWT(JSON.parse(Buffer.from(payload!, 'base64url').toString()))
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(new TextEncoder().encode('a-shared-secret-of-sufficient-length!'));
    expect((await refusal(hs)).reason).toBe('signature');
  });

  it('refuses a token that is not a JWT', async () => {
    expect((await refusal('not.a.jwt')).reason).toBe('malformed');
  });
});
