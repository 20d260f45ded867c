import type { AccessTokenClaims, AccessTokenVerifier, Subject } from '../types.js';

export type Authentication =
  | { readonly ok: true; readonly subject: Subject }
  | { readonly ok: false; readonly tokenSent: boolean; readonly reason: string };

/** The bearer token of an `Authorization` header (RFC 6750 §2.1); never from the query string. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(authorization);
  return match?.[1];
}

function scopesOf(claims: AccessTokenClaims): string[] {
  const { scope } = claims;
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scope)) return scope.filter((s): s is string => typeof s === 'string');
  return [];
}

/**
 * Verifies the request's access token for this resource. Every failure is the same 401 to the client; the
 * reason stays in our logs only.
 */
export async function authenticate(
  authorization: string | undefined,
  verifier: AccessTokenVerifier,
  audience: string,
): Promise<Authentication> {
  const token = bearerToken(authorization);
  if (token === undefined) {
    // Another scheme (Basic, …) is no bearer credential at all: the plain challenge, no error code (RFC 6750 §3.1).
    const tokenSent = authorization !== undefined && /^bearer\b/i.test(authorization.trim());
    return {
      ok: false,
      tokenSent,
      reason: tokenSent ? 'malformed bearer token' : 'no bearer token in Authorization',
    };
  }
  let claims: AccessTokenClaims;
  try {
    claims = await verifier.verifyAccessToken(token, { audience });
  } catch (err) {
    return { ok: false, tokenSent: true, reason: (err as Error)?.message ?? String(err) };
  }
  if (typeof claims.sub !== 'string' || claims.sub === '') {
    return { ok: false, tokenSent: true, reason: 'the token has no "sub" claim' };
  }
  const clientId = typeof claims.client_id === 'string' ? claims.client_id : '';
  return { ok: true, subject: { sub: claims.sub, clientId, scopes: scopesOf(claims) } };
}
