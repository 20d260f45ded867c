/**
 * The signing keys a test file declares, and the JWTs its cases build from claims. A symmetric key is the base64
 * text a policy's `<issuer-signing-keys><key>` holds; an asymmetric one is a key pair made for the run, whose public
 * half is served (as a stubbed HTTP answer) at the `openidConfig` URL a validate-jwt names.
 */
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import type { HttpRequest, HttpResponse } from '../policy/index.js';
import type { TestKey } from './test-file.js';

interface ReadyKey {
  readonly algorithm: string;
  readonly signingKey: Parameters<SignJWT['sign']>[0];
  readonly kid: string;
  readonly issuer: string | undefined;
}

export interface TestKeys {
  /** A compact JWS of these claims (`exp` one hour from `nowMs` unless given or `expiresIn` says otherwise). */
  sign(name: string, claims: Record<string, unknown>, nowMs: number, expiresIn?: number): Promise<string>;
  /** Answers the openid-config and JWKS URLs of the asymmetric keys. */
  answer(request: HttpRequest): HttpResponse | undefined;
}

const jwksPath = '/.portcullis-test/jwks';

export async function prepareKeys(keys: Readonly<Record<string, TestKey>>): Promise<TestKeys> {
  const ready = new Map<string, ReadyKey>();
  const documents = new Map<string, unknown>();
  const jwksByOrigin = new Map<string, JWK[]>();
  for (const [name, key] of Object.entries(keys)) {
    if ('secret' in key) {
      ready.set(name, {
        algorithm: key.algorithm,
        signingKey: Buffer.from(key.secret, 'base64'),
        kid: name,
        issuer: undefined,
      });
      continue;
    }
    const pair = await generateKeyPair(key.algorithm, { extractable: true });
    ready.set(name, { algorithm: key.algorithm, signingKey: pair.privateKey, kid: name, issuer: key.issuer });
    if (key.openidConfig !== undefined) {
      const origin = new URL(key.openidConfig).origin;
      const jwks = jwksByOrigin.get(origin) ?? [];
      jwks.push({ ...(await exportJWK(pair.publicKey)), kid: name, alg: key.algorithm, use: 'sig' });
      jwksByOrigin.set(origin, jwks);
      documents.set(key.openidConfig, {
        issuer: key.issuer ?? origin,
        jwks_uri: `${origin}${jwksPath}`,
      });
    }
  }
  const json = (value: unknown): HttpResponse => ({
    status: 200,
    reason: 'OK',
    headers: [['content-type', 'application/json']],
    body: Buffer.from(JSON.stringify(value)),
  });
  return {
    async sign(name, claims, nowMs, expiresIn) {
      const key = ready.get(name);
      if (key === undefined) throw new TypeError(`no test key "${name}"`);
      const seconds = Math.floor(nowMs / 1000);
      const payload = {
        iat: seconds,
        ...(key.issuer === undefined ? {} : { iss: key.issuer }),
        exp: seconds + (expiresIn ?? 3600),
        ...claims,
      };
      return new SignJWT(payload)
        .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'JWT' })
        .sign(key.signingKey);
    },
    answer(request) {
      const document = documents.get(request.url);
      if (document !== undefined) return json(document);
      const url = new URL(request.url);
      if (url.pathname === jwksPath) {
        const keysOf = jwksByOrigin.get(url.origin);
        if (keysOf) return json({ keys: keysOf });
      }
      return undefined;
    },
  };
}
