import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { Jwt } from '../../../../src/expr/index.js';
import { type FakeServices, fakeServices, inbound } from '../../../doubles/policy-services.js';
import { diagnosticsOf } from '../harness.js';

const ISSUER = 'https://idp.example.com/tenant';
const CONFIG = 'https://idp.example.com/tenant/.well-known/openid-configuration';
const JWKS = 'https://idp.example.com/tenant/keys';
const NOW = Date.UTC(2025, 0, 1) / 1000;

type CryptoKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

let privateKey: CryptoKey;
let publicJwk: JWK;
let publicPem: string;
let other: CryptoKey;
let otherJwk: JWK;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  publicPem = await exportSPKI(pair.publicKey);
  const second = await generateKeyPair('RS256', { extractable: true });
  other = second.privateKey;
  otherJwk = { ...(await exportJWK(second.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' };
});

function idp(keys: JWK[] = [publicJwk]): FakeServices {
  const services = fakeServices();
  services.route(CONFIG, { body: JSON.stringify({ issuer: ISSUER, jwks_uri: JWKS }) });
  services.route(JWKS, { body: JSON.stringify({ keys }) });
  return services;
}

async function token(
  claims: Record<string, unknown> = {},
  key: CryptoKey = privateKey,
  kid = 'k1',
): Promise<string> {
  return new SignJWT({ aud: 'client-1', iss: ISSUER, iat: NOW - 10, exp: NOW + 3600, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid })
    .sign(key);
}

const policy = (extra = '', attrs = '') => `
  <validate-jwt header-name="Authorization" failed-validation-httpcode="401" failed-validation-error-message="Unauthorized. Access token is missing or invalid." output-token-variable-name="jwt" ${attrs}>
    <openid-config url="${CONFIG}" />
    <required-claims><claim name="aud"><value>client-1</value></claim></required-claims>
    ${extra}
  </validate-jwt>`;

async function check(authorization: string | undefined, services = idp(), p = policy()) {
  const headers: [string, string][] = authorization === undefined ? [] : [['Authorization', authorization]];
  const { outcome, context } = await inbound(p, { headers }, services);
  const status = outcome.kind === 'respond' ? outcome.response.status : 0;
  const body = outcome.kind === 'respond' ? outcome.response.body.toString() : '';
  return { reason: context.lastError?.reason ?? 'ok', status, body, context };
}

describe('validate-jwt', () => {
  it('accepts a token signed by a key from the openid-config JWKS, and outputs the Jwt', async () => {
    const r = await check(`Bearer ${await token()}`);
    expect(r.reason).toBe('ok');
    expect(r.context.variables.get('jwt')).toBeInstanceOf(Jwt);
  });

  it('refuses a missing token with the configured status and message', async () => {
    const r = await check(undefined);
    expect([r.reason, r.status]).toEqual(['TokenNotPresent', 401]);
    expect(JSON.parse(r.body)).toEqual({
      statusCode: 401,
      message: 'Unauthorized. Access token is missing or invalid.',
    });
  });

  it('refuses an expired token, unless within clock-skew', async () => {
    const expired = await token({ exp: NOW - 30 });
    expect((await check(`Bearer ${expired}`)).reason).toBe('TokenExpired');
    expect((await check(`Bearer ${expired}`, idp(), policy('', 'clock-skew="60"'))).reason).toBe('ok');
  });

  it('requires an expiration time by default', async () => {
    const noExp = await new SignJWT({ aud: 'client-1' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .sign(privateKey);
    expect((await check(`Bearer ${noExp}`)).reason).toBe('TokenExpired');
    expect(
      (await check(`Bearer ${noExp}`, idp(), policy('', 'require-expiration-time="false"'))).reason,
    ).toBe('ok');
  });

  it('refuses a wrong audience and a wrong issuer', async () => {
    const p = policy('<audiences><audience>client-1</audience></audiences>');
    expect((await check(`Bearer ${await token({ aud: 'someone-else' })}`, idp(), p)).reason).toBe(
      'TokenAudienceNotAllowed',
    );
    const wrongIss = await new SignJWT({ aud: 'client-1' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer('https://evil.example.com')
      .setExpirationTime(NOW + 60)
      .sign(privateKey);
    expect((await check(`Bearer ${wrongIss}`)).reason).toBe('TokenIssuerNotAllowed');
  });

  it('refuses an unsigned token (alg none)', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ iss: ISSUER, aud: 'client-1', exp: NOW + 60 })).toString(
      'base64url',
    );
    const r = await check(`Bearer ${header}.${payload}.`);
    expect([r.reason, r.status]).toEqual(['TokenSignatureInvalid', 401]);
  });

  it('refuses HS256 signed with the public key as the secret', async () => {
    const forged = await new SignJWT({ aud: 'client-1' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setExpirationTime(NOW + 60)
      .sign(new TextEncoder().encode(publicPem));
    const r = await check(`Bearer ${forged}`);
    expect(r.reason).not.toBe('ok');
    expect(r.status).toBe(401);
  });

  it('refuses a token whose signature does not verify', async () => {
    const t = await token();
    const [h, p] = t.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ aud: 'client-1', iss: ISSUER, exp: NOW + 60, admin: true })).toString('base64url')}.${t.split('.')[2]}`;
    expect(p).toBeDefined();
    expect((await check(`Bearer ${tampered}`)).reason).toBe('TokenSignatureInvalid');
  });

  it('caches discovery and JWKS, and finds a rotated key after the refresh interval', async () => {
    const services = idp();
    const p = policy();
    const shared = { policy: p };
    // One compiled pipeline, so the element's cache is shared across requests.
    const { pipelineOf, policies, request } = await import('../../../doubles/policy-services.js');
    const { PipelineRun } = await import('../../../../src/policy/runner.js');
    const pipeline = pipelineOf(policies({ inbound: shared.policy }));
    const send = async (t: string) => {
      const r = new PipelineRun(pipeline, request({ headers: [['Authorization', `Bearer ${t}`]] }), services);
      await r.onRequest();
      return r.context.lastError?.reason ?? 'ok';
    };
    expect(await send(await token())).toBe('ok');
    expect(await send(await token())).toBe('ok');
    // Discovery and JWKS are fetched once and cached.
    expect(services.fetched.map((f) => f.url)).toEqual([CONFIG, JWKS]);
    services.route(JWKS, { body: JSON.stringify({ keys: [publicJwk, otherJwk] }) });
    const rotated = await token({}, other, 'k2');
    expect(await send(rotated)).toBe('TokenSignatureKeyNotFound');
    services.now += 6 * 60 * 1000;
    expect(await send(rotated)).toBe('ok');
  });

  it('validates with issuer-signing-keys (base64 symmetric key)', async () => {
    const secret = Buffer.from('0123456789abcdef0123456789abcdef');
    const t = await new SignJWT({ sub: 'u' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(NOW + 60)
      .sign(secret);
    const p = `<validate-jwt header-name="X-Token"><issuer-signing-keys><key>${secret.toString('base64')}</key></issuer-signing-keys></validate-jwt>`;
    const { context } = await inbound(p, { headers: [['X-Token', t]] }, fakeServices());
    expect(context.lastError?.message ?? null).toBeNull();
    const bad = await new SignJWT({ sub: 'u' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(NOW + 60)
      .sign(Buffer.from('x'.repeat(32)));
    expect(
      (await inbound(p, { headers: [['X-Token', bad]] }, fakeServices())).context.lastError?.reason,
    ).toBe('TokenSignatureInvalid');
  });

  it('checks required claims with match all/any and a separator', async () => {
    const claims = (match: string, values: string[]) =>
      policy(
        `</required-claims><required-claims>`.slice(0, 0) + `<issuers><issuer>${ISSUER}</issuer></issuers>`,
      ).replace(
        '<required-claims><claim name="aud"><value>client-1</value></claim></required-claims>',
        `<required-claims><claim name="scp" match="${match}" separator=" ">${values.map((v) => `<value>${v}</value>`).join('')}</claim></required-claims>`,
      );
    const t = `Bearer ${await token({ scp: 'read write' })}`;
    expect((await check(t, idp(), claims('all', ['read', 'write']))).reason).toBe('ok');
    expect((await check(t, idp(), claims('all', ['read', 'admin']))).reason).toBe(
      'TokenClaimValueNotAllowed',
    );
    expect((await check(t, idp(), claims('any', ['admin', 'write']))).reason).toBe('ok');
    expect((await check(`Bearer ${await token()}`, idp(), claims('any', ['read']))).reason).toBe(
      'TokenClaimNotFound',
    );
  });

  it('checks the scheme of the Authorization header when require-scheme is set', async () => {
    const t = await token();
    expect((await check(`Token ${t}`, idp(), policy('', 'require-scheme="Bearer"'))).reason).toBe(
      'TokenNotPresent',
    );
    expect((await check(`Bearer ${t}`, idp(), policy('', 'require-scheme="Bearer"'))).reason).toBe('ok');
  });

  it('reads the token from a query parameter or an expression', async () => {
    const t = await token();
    const q = `<validate-jwt query-parameter-name="access_token"><openid-config url="${CONFIG}" /></validate-jwt>`;
    expect((await inbound(q, { url: `https://gw/x?access_token=${t}` }, idp())).context.lastError).toBeNull();
    const e = `<validate-jwt token-value="@(context.Request.Headers.GetValueOrDefault(&quot;X-T&quot;, &quot;&quot;))"><openid-config url="${CONFIG}" /></validate-jwt>`;
    expect((await inbound(e, { headers: [['X-T', t]] }, idp())).context.lastError).toBeNull();
  });

  it('uses failed-validation-httpcode', async () => {
    const r = await check(
      undefined,
      idp(),
      policy('', '').replace('failed-validation-httpcode="401"', 'failed-validation-httpcode="403"'),
    );
    expect(r.status).toBe(403);
  });

  it('needs exactly one token source', () => {
    expect(diagnosticsOf('<validate-jwt />')).toEqual([
      'policies/inbound/validate-jwt[1]: validate-jwt needs exactly one of header-name, query-parameter-name and token-value, got 0',
    ]);
  });
});
