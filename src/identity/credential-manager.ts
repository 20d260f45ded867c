import { decodeJwt } from 'jose';
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
  readonly now?: () => number;
}

/**
 * API Management's credential manager for get-authorization-context: providers (an OAuth client) and their
 * connections (the resource a token is for). Client-credentials connections act for the gateway, whoever the user
 * is; tokens are cached like the identities' (until shortly before expiry, one fetch per connection at a time).
 */
export class CredentialManager {
  readonly #providers = new Map<string, { source: TokenSource; config: CredentialProviderConfig }>();
  readonly #cache: TokenCache;

  constructor(options: CredentialManagerOptions) {
    const now = options.now ?? Date.now;
    this.#cache = new TokenCache(now);
    for (const [id, config] of Object.entries(options.providers)) {
      const source = createSource(config.source, {
        name: `credential provider ${id}`,
        directory: options.directory,
        now,
      });
      this.#providers.set(id, { source, config });
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
