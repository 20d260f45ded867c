import type { Middleware } from 'koa';
import { ClientAuthenticator } from './client-auth.js';
import { ClientDirectory, ClientDocuments } from './client-documents/directory.js';
import { buildMetadata } from './endpoints/metadata.js';
import { KeyRing } from './keys.js';
import { type AuthServerOptions, productScopes, resolveOptions } from './options.js';
import { routerOf, routeTable } from './routes.js';
import type { ServerContext } from './server-context.js';
import { FileClientStore, importClientsFile, loadSigningKeys, saveSigningKeys } from './stores/file.js';
import { createMemoryStores } from './stores/memory.js';
import { type AccessTokenClaims, AccessTokens } from './tokens.js';

export { hashPassword, verifyPassword } from './crypto.js';
export { ERROR_CATALOG, OAuthError, type OAuthErrorCode } from './errors.js';
export type {
  AuthLimits,
  AuthServerOptions,
  AuthUser,
  ClientMetadataDocumentsOptions,
  SigningAlgorithm,
} from './options.js';
export { peerAddress } from './options.js';
export { createMemoryStores } from './stores/memory.js';
export type * from './stores/types.js';
export type { AccessTokenClaims } from './tokens.js';
export type { UpstreamProviderOptions } from './upstream/options.js';

export interface AuthorizationServer {
  /** Every AS route; mount it in the Koa app before any body parser (the AS reads raw bodies itself). */
  middleware: Middleware;
  /**
   * Verifies an access token for a resource. Throws OAuthError with code `invalid_token` (401) or
   * `insufficient_scope` (403); the caller builds the `WWW-Authenticate: Bearer` challenge from it.
   */
  verifyAccessToken(
    token: string,
    expected: { audience: string; requiredScopes?: string[] },
  ): Promise<AccessTokenClaims>;
  /**
   * A short-lived RFC 9068 token for the gateway with the user as subject, used by the MCP service when it
   * calls an API on the user's behalf (the user's own token is never passed on). validate-jwt can verify it
   * through jwks_uri.
   */
  mintServiceToken(input: {
    subject: string;
    audience: string;
    scope: string[];
    ttlSeconds?: number;
  }): Promise<string>;
  /** The RFC 8414 metadata document as served. */
  metadata(): Record<string, unknown>;
  /**
   * Makes the scopes those of `products` from now on (a reloaded configuration): registration, authorization and
   * `scopes_supported` follow together. Tokens, grants, refresh tokens and registered clients already issued stay
   * as they are — a token's scope keeps meaning its product. Throws TypeError (nothing changed) for an empty list
   * or a name that cannot be part of a scope.
   */
  setProducts(products: readonly string[]): void;
  /** Promotes the pre-published next signing key; live tokens stay valid. */
  rotateSigningKey(): Promise<void>;
  close(): Promise<void>;
}

export async function createAuthorizationServer(input: AuthServerOptions): Promise<AuthorizationServer> {
  const options = resolveOptions(input);
  const stores =
    input.stores ??
    createMemoryStores(options.clock, { maxInteractions: options.limits.pendingAuthorizations });
  if (input.dataDir !== undefined && input.stores === undefined)
    stores.clients = await FileClientStore.open(input.dataDir);
  else if (input.dataDir !== undefined) {
    // Given stores (embedded, Redis) hold the registrations: the ones an earlier start kept in the data
    // directory move there once, so clients registered before the switch keep working.
    const imported = await importClientsFile(input.dataDir, stores.clients);
    if (imported > 0)
      options.logger.info('auth: registered clients moved from the data directory into the store', {
        imported,
      });
  }
  const keys = await openKeyRing(input);
  const tokens = new AccessTokens(options, keys, stores.denylist, stores.clients);
  const clients = new ClientDirectory(
    stores.clients,
    options.clientDocuments && new ClientDocuments(options, options.clientDocuments),
  );
  const server: ServerContext = {
    options,
    stores,
    keys,
    tokens,
    clientAuth: new ClientAuthenticator(options, clients, stores.counters),
    clients,
  };

  const middleware = routerOf(routeTable(server), options.logger).routes() as Middleware;

  return {
    middleware,
    verifyAccessToken: (token, expected) => tokens.verify(token, expected),
    async mintServiceToken({ subject, audience, scope, ttlSeconds }) {
      const { token } = await tokens.mint({
        sub: subject,
        clientId: options.serviceClientId,
        scope,
        resource: audience,
        ttlSeconds: Math.min(ttlSeconds ?? 300, options.accessTokenTtl),
      });
      return token;
    },
    metadata: () => buildMetadata(server),
    setProducts(products) {
      // Every reader looks the list up per request; the metadata endpoint re-serializes when it sees a new one.
      options.scopes = productScopes(products);
    },
    async rotateSigningKey() {
      await keys.rotate(options.clock());
      if (input.dataDir !== undefined && !input.signingKeys?.keys)
        await saveSigningKeys(input.dataDir, keys.privateJwks());
    },
    close: () => stores.close(),
  };
}

/** Configured keys win; otherwise keys persisted in the data directory; otherwise generated (and persisted). */
async function openKeyRing(input: AuthServerOptions): Promise<KeyRing> {
  if (input.signingKeys?.keys?.length || input.dataDir === undefined)
    return KeyRing.create(input.signingKeys);
  const saved = await loadSigningKeys(input.dataDir);
  if (saved?.length) return KeyRing.create({ ...input.signingKeys, keys: saved });
  const ring = await KeyRing.create(input.signingKeys);
  await saveSigningKeys(input.dataDir, ring.privateJwks());
  return ring;
}
