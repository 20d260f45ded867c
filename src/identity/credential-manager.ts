import { decodeJwt } from 'jose';
import type { DelegatedTokens } from '../state/delegated-tokens.js';
import { DelegatedConnection } from './delegated.js';
import { IdentityError } from './errors.js';
import type { CredentialProviderConfig } from './options.js';
import { createSource } from './sources/index.js';
import { TokenCache, type TokenSource } from './token-source.js';

export interface AuthorizationRequest {
  readonly providerId: string;
  readonly authorizationId: string;
  /** identity-type="jwt": the user the connection acts for (the presented token's subject). */
  readonly user?: string;
}

export interface Authorization {
  readonly accessToken: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

export interface CredentialManagerOptions {
  readonly providers: Readonly<Record<string, CredentialProviderConfig>>;
  readonly directory: string;
  /**
   * The upstream tokens the authorization server kept at sign-in (identities.delegatedTokenKey, in the shared
   * state): what user-delegated connections use. Absent: those connections fail.
   */
  readonly delegated?: DelegatedTokens;
  readonly now?: () => number;
}

/**
 * API Management's credential manager for get-authorization-context: providers (an OAuth client) and their
 * connections (the resource a token is for). Client-credentials connections act for the gateway, whoever the user
 * is; user-delegated connections carry the user's own token from the upstream identity provider (delegated.ts).
 * Tokens are cached like the identities' (until shortly before expiry, one fetch per connection, or per user, at a
 * time).
 */
export class CredentialManager {
  readonly #providers = new Map<
    string,
    { source: TokenSource; config: CredentialProviderConfig; delegated: DelegatedConnection | undefined }
  >();
  readonly #cache: TokenCache;

  constructor(options: CredentialManagerOptions) {
    const now = options.now ?? Date.now;
    this.#cache = new TokenCache(now);
    for (const [id, config] of Object.entries(options.providers)) {
      const context = { name: `credential provider ${id}`, directory: options.directory, now };
      const source = createSource(config.source, context);
      const delegated =
        options.delegated !== undefined && config.source.type === 'client-credentials'
          ? new DelegatedConnection(options.delegated, config.source, context)
          : undefined;
      this.#providers.set(id, { source, config, delegated });
    }
  }

  async authorization(request: AuthorizationRequest): Promise<Authorization> {
    const provider = this.#providers.get(request.providerId);
    if (provider === undefined)
      throw new IdentityError(
        'unknown-identity',
        `no credential provider "${request.providerId}" (identities.credentialProviders: ${[...this.#providers.keys()].join(', ') || 'none'})`,
      );
    const connection = provider.config.connections[request.authorizationId];
    if (connection === undefined)
      throw new IdentityError(
        'unknown-identity',
        `credential provider "${request.providerId}" has no connection "${request.authorizationId}"`,
      );
    if ('delegated' in connection) {
      const { user } = request;
      if (user === undefined)
        throw new IdentityError(
          'unknown-identity',
          `connection "${request.authorizationId}" of credential provider "${request.providerId}" is user-delegated: it needs identity-type="jwt" and the user's token`,
        );
      const delegated = provider.delegated;
      if (delegated === undefined)
        throw new IdentityError(
          'unavailable',
          `connection "${request.authorizationId}" of credential provider "${request.providerId}" is user-delegated, but ${
            provider.config.source.type === 'client-credentials'
              ? 'no delegated tokens are kept (identities.delegatedTokenKey with state.dataDir or state.redis)'
              : "its source refreshes no user tokens (use a client-credentials source: the identity provider's client)"
          }`,
        );
      // One entry per provider, user and scopes: delegated connections without scopes carry the sign-in's token.
      await delegated.assertKept(user);
      const scopes = connection.scopes;
      const { token } = await this.#cache.get(
        `${request.providerId}\n\u0000delegated\n${user}\n${scopes.join(' ')}`,
        () => delegated.token(user, scopes),
      );
      return { accessToken: token, claims: claimsOf(token) };
    }
    const { token } = await this.#cache.get(`${request.providerId}\n${request.authorizationId}`, () =>
      provider.source.fetch({ resource: connection.resource }),
    );
    return { accessToken: token, claims: claimsOf(token) };
  }
}

/** A JWT's claims, or none for an opaque token. */
function claimsOf(token: string): Record<string, unknown> {
  try {
    return decodeJwt(token);
  } catch {
    return {};
  }
}
