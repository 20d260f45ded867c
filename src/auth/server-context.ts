import type { ClientAuthenticator } from './client-auth.js';
import type { ClientDirectory } from './client-documents/directory.js';
import { digest, randomToken } from './crypto.js';
import { OAuthError } from './errors.js';
import type { KeyRing } from './keys.js';
import type { ResolvedOptions } from './options.js';
import type { AuthStores, ClientRecord, GrantRecord } from './stores/types.js';
import type { AccessTokens } from './tokens.js';

/** Everything a handler needs, built once by createAuthorizationServer(). */
export interface ServerContext {
  options: ResolvedOptions;
  stores: AuthStores;
  keys: KeyRing;
  tokens: AccessTokens;
  clientAuth: ClientAuthenticator;
  /**
   * Every client a request may name: the registered ones (`stores.clients`) and those identified by a client
   * metadata document URL. Look clients up here, never in `stores.clients`, where a request names the client.
   */
  clients: ClientDirectory;
}

/** RFC 6749 §5.1 token response. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

/**
 * Mints an access token (recorded on its grant so revoking the grant denylists it) and, when the client may
 * refresh, a new refresh token of the same grant. A grant revoked concurrently (a code replay racing this
 * exchange) makes the issuance fail instead of handing out a token nobody can revoke.
 */
export async function issueTokens(
  server: ServerContext,
  input: { grant: GrantRecord; client: ClientRecord; scope: string[]; authTime?: number },
): Promise<TokenResponse> {
  const { options, stores, tokens } = server;
  const { grant, client } = input;
  const { token, claims } = await tokens.mint({
    sub: grant.sub,
    clientId: client.clientId,
    scope: input.scope,
    resource: grant.resource,
    ...(input.authTime === undefined ? {} : { authTime: input.authTime }),
  });
  if (!(await stores.grants.addAccessToken(grant.id, claims.jti, claims.exp))) {
    throw new OAuthError('invalid_grant', 'the grant has been revoked');
  }
  const response: TokenResponse = {
    access_token: token,
    token_type: 'Bearer',
    expires_in: options.accessTokenTtl,
    scope: claims.scope,
  };
  if (client.metadata.grant_types.includes('refresh_token')) {
    const refreshToken = randomToken();
    const now = options.clock();
    await stores.refreshTokens.put({
      id: digest(refreshToken),
      grantId: grant.id,
      clientId: client.clientId,
      sub: grant.sub,
      // A rotated refresh token keeps the whole grant's scope; only the access token is narrowed (OAuth 2.1 §4.3.1).
      scope: grant.scope,
      resource: grant.resource,
      issuedAt: now,
      expiresAt: Math.min(now + options.refreshTokenTtl, grant.expiresAt),
      consumed: false,
    });
    response.refresh_token = refreshToken;
  }
  return response;
}

/** Revokes a grant and denylists every access token issued from it. */
export async function revokeGrant(server: ServerContext, grantId: string): Promise<void> {
  const grant =
    server.options.delegatedTokens === undefined ? undefined : await server.stores.grants.get(grantId);
  const live = await server.stores.grants.revoke(grantId);
  await Promise.all(live.map(({ jti, expiresAt }) => server.stores.denylist.add(jti, expiresAt)));
  // The upstream tokens kept at the user's sign-in act for them only while they hold a grant of ours: once it ends
  // (revoked, or a replayed code or refresh token), get-authorization-context may no longer use them.
  if (grant !== undefined) await server.options.delegatedTokens!.remove(grant.sub);
}
