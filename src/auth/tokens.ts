import { createLocalJWKSet, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { isUrlClientId } from './client-documents/client-id.js';
import { randomToken } from './crypto.js';
import { OAuthError } from './errors.js';
import type { KeyRing } from './keys.js';
import type { ResolvedOptions } from './options.js';
import type { AccessTokenDenylist, ClientStore } from './stores/types.js';

/** RFC 9068 access token claims as issued here. */
export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  jti: string;
  client_id: string;
  /** Space-separated. */
  scope: string;
  auth_time?: number;
}

export interface AccessTokenInput {
  sub: string;
  clientId: string;
  scope: string[];
  resource: string;
  authTime?: number;
  ttlSeconds?: number;
}

/** Drops one trailing slash so `https://h/mcp` and `https://h/mcp/` name the same resource. */
export function canonicalResource(resource: string): string {
  return resource.endsWith('/') ? resource.slice(0, -1) : resource;
}

export class AccessTokens {
  #keySet: ReturnType<typeof createLocalJWKSet> | undefined;
  #keySetVersion = -1;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly keys: KeyRing,
    private readonly denylist: AccessTokenDenylist,
    private readonly clients: ClientStore,
  ) {}

  async mint(input: AccessTokenInput): Promise<{ token: string; claims: AccessTokenClaims }> {
    const iat = this.options.clock();
    const claims: AccessTokenClaims = {
      iss: this.options.issuer,
      sub: input.sub,
      aud: input.resource,
      exp: iat + (input.ttlSeconds ?? this.options.accessTokenTtl),
      iat,
      jti: randomToken(18),
      client_id: input.clientId,
      scope: input.scope.join(' '),
      ...(input.authTime === undefined ? {} : { auth_time: input.authTime }),
    };
    const key = this.keys.current;
    const token = await new SignJWT(claims as unknown as JWTPayload)
      .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
      .sign(key.privateKey);
    return { token, claims };
  }

  /**
   * Verifies signature, algorithm (pinned: never `none`, never HS*), typ, issuer, audience, lifetime, the
   * revocation denylist and that the client still exists. Every failure is `invalid_token`; jose's TypeErrors for key/alg confusion included,
   * so a forged header can never produce a 500.
   */
  async verify(
    token: string,
    expected: { audience: string; requiredScopes?: string[] },
  ): Promise<AccessTokenClaims> {
    const claims = await this.verifySignature(token, expected.audience);
    if (await this.denylist.has(claims.jti))
      throw new OAuthError('invalid_token', 'the access token has been revoked');
    // RFC 7592 §2.3: deleting a client invalidates its tokens. Checked here rather than by denylisting every
    // token at deletion, because no store lists a client's grants. The gateway's own service tokens have no
    // registration.
    // A client identified by its metadata document is not registered here and cannot be deleted: its tokens end with
    // their grant, and refreshing fetches the document again. No fetch on the resource's request path.
    if (
      claims.client_id !== this.options.serviceClientId &&
      !isUrlClientId(claims.client_id) &&
      !(await this.clients.get(claims.client_id))
    )
      throw new OAuthError('invalid_token', 'the client this access token was issued to has been deleted');
    const granted = new Set(claims.scope.split(' '));
    const missing = (expected.requiredScopes ?? []).filter((s) => !granted.has(s));
    if (missing.length > 0) {
      throw new OAuthError('insufficient_scope', `the access token lacks the scope ${missing.join(' ')}`);
    }
    return claims;
  }

  /** Signature and claims only, for revocation and introspection, where any of our resources is acceptable. */
  async verifySignature(token: string, audience?: string): Promise<AccessTokenClaims> {
    let payload: JWTPayload;
    try {
      const audiences =
        audience === undefined ? undefined : [canonicalResource(audience), `${canonicalResource(audience)}/`];
      ({ payload } = await jwtVerify(token, this.keySet(), {
        algorithms: [this.keys.algorithm],
        issuer: this.options.issuer,
        ...(audiences ? { audience: audiences } : {}),
        typ: 'at+jwt',
        requiredClaims: ['exp', 'iat', 'sub', 'jti', 'client_id', 'aud'],
        currentDate: new Date(this.options.clock() * 1000),
        clockTolerance: 5,
      }));
    } catch (err) {
      const reason = err instanceof Error && 'code' in err ? String(err.code) : 'malformed';
      throw new OAuthError('invalid_token', `the access token is not valid (${reason})`);
    }
    if (
      typeof payload.client_id !== 'string' ||
      typeof payload.jti !== 'string' ||
      typeof payload.aud !== 'string'
    ) {
      throw new OAuthError('invalid_token', 'the access token is not valid (claims)');
    }
    return { ...payload, scope: typeof payload.scope === 'string' ? payload.scope : '' } as AccessTokenClaims;
  }

  private keySet() {
    const jwks = this.keys.publicJwks(this.options.clock(), this.options.accessTokenTtl);
    if (!this.#keySet || this.#keySetVersion !== this.keys.version) {
      this.#keySet = createLocalJWKSet(jwks);
      this.#keySetVersion = this.keys.version;
    }
    return this.#keySet;
  }
}
