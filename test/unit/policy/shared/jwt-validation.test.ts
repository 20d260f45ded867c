import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactEncrypt, EncryptJWT, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { Jwt } from '../../../../src/expr/index.js';
import { PolicyLoadError } from '../../../../src/policy/diagnostics.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../../src/policy/document.js';
import { fakeServices, inbound, policies } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

/** `<decryption-keys>` of validate-jwt and validate-azure-ad-token: encrypted tokens (JWE) opened before the signature check. */

const NOW = Date.UTC(2025, 0, 1) / 1000;
const SIGNING = Buffer.from('signing-key-0123456789abcdef0123');
const WRAPPING = Buffer.from('wrapping-key-0123456789abcdef012');
const OTHER = Buffer.from('another-key-0123456789abcdef0123');
const b64 = (bytes: Buffer) => bytes.toString('base64');

const signed = (claims: Record<string, unknown> = {}) =>
  new SignJWT({ sub: 'user-7', ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(NOW + 60)
    .sign(SIGNING);

/** A nested JWT: the signed token as the plaintext of a JWE (A256KW + A256GCM, the content type JWT). */
async function encrypted(
  key: Uint8Array | KeyObject = WRAPPING,
  header: { alg: string; enc: string; kid?: string } = { alg: 'A256KW', enc: 'A256GCM' },
  inner?: string,
): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(inner ?? (await signed())))
    .setProtectedHeader({ ...header, cty: 'JWT' })
    .encrypt(key);
}

const validateJwt = (keys: string, attrs = '') => `
  <validate-jwt header-name="X-Token" output-token-variable-name="jwt" ${attrs}>
    <issuer-signing-keys><key>${b64(SIGNING)}</key></issuer-signing-keys>
    <decryption-keys>${keys}</decryption-keys>
  </validate-jwt>`;

async function run(statements: string, token: string, services = fakeServices()) {
  const { context } = await inbound(statements, { headers: [['X-Token', token]] }, services);
  return { reason: context.lastError?.reason ?? 'ok', message: context.lastError?.message, context };
}

describe('decryption-keys: loading', () => {
  it('takes base64 keys, expressions and certificate ids', () => {
    expect(
      diagnosticsOf(
        validateJwt(
          `<key id="k1">${b64(WRAPPING)}</key><key>@((string)context.Variables["key"])</key><key certificate-id="jwe-cert" />`,
        ),
      ),
    ).toEqual([]);
  });

  it('refuses a key that is not base64, that is empty, or that has both a certificate and a text', () => {
    expect(
      diagnosticsOf(
        validateJwt(`<key>not a key!</key><key /><key certificate-id="jwe-cert">${b64(WRAPPING)}</key>`),
      ),
    ).toEqual([
      'policies/inbound/validate-jwt[1]/decryption-keys[2]/key[1]: validate-jwt/decryption-keys/key must hold a base64 key, got "not a key!"',
      'policies/inbound/validate-jwt[1]/decryption-keys[2]/key[2]: validate-jwt/decryption-keys/key needs a base64 key as its text or a certificate-id',
      'policies/inbound/validate-jwt[1]/decryption-keys[2]/key[3]: validate-jwt/decryption-keys/key takes either certificate-id or a base64 key as its text, got both',
    ]);
  });

  it('refuses, at file:line:col, a certificate-id the gateway’s certificate store does not have', () => {
    const xml = policies({
      inbound: `<validate-azure-ad-token tenant-id="t">\n  <decryption-keys>\n    <key certificate-id="missing" />\n  </decryption-keys>\n</validate-azure-ad-token>`,
    });
    const compile = () =>
      compilePolicyDocument(readPolicyDocument(xml, { file: 'api.xml', namedValues: new Map() }), {
        scope: 'api',
        certificateIds: new Set(['jwe-cert']),
      });
    expect(compile).toThrow(PolicyLoadError);
    try {
      compile();
    } catch (err) {
      const [d] = (err as PolicyLoadError).diagnostics;
      expect([d!.file, d!.line, d!.column]).toEqual(['api.xml', 4, 5]);
      expect(d!.message).toBe(
        'validate-azure-ad-token/decryption-keys/key/@certificate-id must name a certificate of tls.certificates, got "missing" (known: jwe-cert)',
      );
    }
  });
});

describe('decryption-keys: validating', () => {
  it('opens a nested JWT with a symmetric key, checks the inner signature and outputs the inner Jwt', async () => {
    const r = await run(validateJwt(`<key>${b64(WRAPPING)}</key>`), await encrypted());
    expect(r.reason).toBe('ok');
    const jwt = r.context.variables.get('jwt') as Jwt;
    expect(jwt).toBeInstanceOf(Jwt);
    expect(jwt.claim('sub')).toBe('user-7');
  });

  it('tries each key in turn, skipping those whose id is not the token’s kid', async () => {
    const keys = `<key id="old">${b64(OTHER)}</key><key id="new">${b64(WRAPPING)}</key>`;
    expect(
      (await run(validateJwt(keys), await encrypted(WRAPPING, { alg: 'A256KW', enc: 'A256GCM', kid: 'new' })))
        .reason,
    ).toBe('ok');
    expect(
      (await run(validateJwt(`<key>${b64(OTHER)}</key><key>${b64(WRAPPING)}</key>`), await encrypted()))
        .reason,
    ).toBe('ok');
  });

  it('refuses a token no key opens (JwtInvalid, the client told "Invalid JWT.")', async () => {
    const { outcome, context } = await inbound(validateJwt(`<key>${b64(OTHER)}</key>`), {
      headers: [['X-Token', await encrypted()]],
    });
    expect(context.lastError?.reason).toBe('JwtInvalid');
    expect(context.lastError?.message).toBe('JWT decryption failed: no decryption key opens the token.');
    expect(outcome.kind === 'respond' && JSON.parse(outcome.response.body.toString())).toEqual({
      statusCode: 401,
      message: 'Invalid JWT.',
    });
  });

  it('still validates a token that is not encrypted', async () => {
    expect((await run(validateJwt(`<key>${b64(WRAPPING)}</key>`), await signed())).reason).toBe('ok');
  });

  it('refuses an encrypted token when the policy has no decryption keys', async () => {
    const p = `<validate-jwt header-name="X-Token"><issuer-signing-keys><key>${b64(SIGNING)}</key></issuer-signing-keys></validate-jwt>`;
    expect(await run(p, await encrypted())).toMatchObject({
      reason: 'JwtInvalid',
      message: 'JWT is encrypted and the policy has no decryption keys.',
    });
  });

  it('checks the signature inside: a nested token signed with another key is refused', async () => {
    const forged = await new SignJWT({ sub: 'user-7' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(NOW + 60)
      .sign(OTHER);
    const r = await run(
      validateJwt(`<key>${b64(WRAPPING)}</key>`),
      await encrypted(WRAPPING, undefined, forged),
    );
    expect(r.reason).toBe('TokenSignatureInvalid');
  });

  it('treats an encrypted bare claims set as an unsigned token (require-signed-tokens decides)', async () => {
    const bare = await new EncryptJWT({ sub: 'user-7' })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setExpirationTime(NOW + 60)
      .encrypt(WRAPPING);
    expect((await run(validateJwt(`<key>${b64(WRAPPING)}</key>`), bare)).reason).toBe(
      'TokenSignatureInvalid',
    );
    expect(
      (await run(validateJwt(`<key>${b64(WRAPPING)}</key>`, 'require-signed-tokens="false"'), bare)).reason,
    ).toBe('ok');
  });

  it('reads a key from an expression', async () => {
    const p = `<set-variable name="key" value="${b64(WRAPPING)}" />${validateJwt('<key>@((string)context.Variables["key"])</key>')}`;
    expect((await run(p, await encrypted())).reason).toBe('ok');
  });

  it('opens an RSA-OAEP token with the private key of a certificate of the store', async () => {
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const services = Object.assign(fakeServices(), {
      certificateKeys: { privateKey: (id: string) => (id === 'jwe-cert' ? pair.privateKey : undefined) },
    });
    const token = await encrypted(pair.publicKey, { alg: 'RSA-OAEP-256', enc: 'A256GCM' });
    expect((await run(validateJwt('<key certificate-id="jwe-cert" />'), token, services)).reason).toBe('ok');
    // A certificate the store does not hold is the gateway's fault: a failure (500), not a refusal of the token.
    const { outcome, context } = await inbound(
      validateJwt('<key certificate-id="elsewhere" />'),
      { headers: [['X-Token', token]] },
      services,
    );
    expect(outcome.kind === 'respond' && outcome.response.status).toBe(500);
    expect(context.lastError?.source).toBe('validate-jwt');
    expect(JSON.stringify(services.logs)).toContain(
      'decryption key certificate \\"elsewhere\\" is not in tls.certificates',
    );
  });
});
