import { errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';

export interface ExpectedIdToken {
  issuer: string;
  clientId: string;
  nonce: string;
  /** Epoch seconds; injected by tests. */
  now?: number;
}

export interface UpstreamIdentity {
  sub: string;
  name?: string;
  email?: string;
}

/** Why an upstream ID token was refused; the message is safe to show to the user. */
export class IdTokenError extends Error {
  constructor(
    readonly reason: 'signature' | 'claims' | 'expired' | 'nonce' | 'malformed',
    message: string,
  ) {
    super(message);
    this.name = 'IdTokenError';
  }
}

/** Asymmetric algorithms only: an HS256 token "signed" with a public key or alg none never verifies. */
const ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS384', 'RS512'];

/**
 * Verifies an ID token from the upstream token endpoint against the provider's JWKS (OpenID Connect Core
 * §3.1.3.7): signature, iss, aud (and azp when several audiences), exp, iat, nonce. oauth4webapi checks the
 * claims too but not the signature of a back-channel ID token; this check does not rely on TLS alone.
 */
export async function verifyIdToken(
  idToken: string,
  keys: JWTVerifyGetKey,
  expected: ExpectedIdToken,
): Promise<UpstreamIdentity> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keys, {
      issuer: expected.issuer,
      audience: expected.clientId,
      algorithms: ALGORITHMS,
      requiredClaims: ['sub', 'exp', 'iat'],
      clockTolerance: 30,
      ...(expected.now === undefined ? {} : { currentDate: new Date(expected.now * 1000) }),
    }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) throw new IdTokenError('expired', 'the ID token has expired');
    if (err instanceof errors.JWTClaimValidationFailed)
      throw new IdTokenError('claims', `the ID token's "${err.claim}" claim is not valid (${err.reason})`);
    if (
      err instanceof errors.JWSSignatureVerificationFailed ||
      err instanceof errors.JWKSNoMatchingKey ||
      err instanceof errors.JOSEAlgNotAllowed
    )
      throw new IdTokenError('signature', 'the ID token is not signed by the identity provider');
    if (err instanceof errors.JOSEError)
      throw new IdTokenError('malformed', `the ID token is malformed (${err.code})`);
    throw err;
  }
  const aud = payload.aud;
  if (Array.isArray(aud) && aud.length > 1 && payload.azp !== expected.clientId)
    throw new IdTokenError('claims', 'the ID token has several audiences and is not authorized for us (azp)');
  if (payload.nonce !== expected.nonce)
    throw new IdTokenError('nonce', 'the ID token was not issued for this sign-in (nonce mismatch)');
  const sub = payload.sub!;
  if (sub === '' || sub.length > 255) throw new IdTokenError('claims', 'the ID token has an unusable "sub"');
  const identity: UpstreamIdentity = { sub };
  if (typeof payload.name === 'string') identity.name = payload.name;
  if (typeof payload.email === 'string') identity.email = payload.email;
  return identity;
}
