import type { Context, Middleware } from 'koa';
import { ClientAuthenticator } from './client-auth.js';
import { authorizeEndpoints } from './endpoints/authorize.js';
import { buildMetadata, jwksEndpoint, metadataEndpoint, PUBLIC_CACHE } from './endpoints/metadata.js';
import { registrationEndpoint, registrationManagementEndpoints } from './endpoints/register.js';
import { introspectionEndpoint, tokenEndpoint } from './endpoints/token.js';
import { KeyRing } from './keys.js';
import { type AuthServerOptions, productScopes, resolveOptions } from './options.js';
import { escapeRegExp, type Route, routerOf } from './routes.js';
import type { ServerContext } from './server-context.js';
import { FileClientStore, loadSigningKeys, saveSigningKeys } from './stores/file.js';
import { createMemoryStores } from './stores/memory.js';
import { type AccessTokenClaims, AccessTokens } from './tokens.js';

export { hashPassword, verifyPassword } from './crypto.js';
export { ERROR_CATALOG, OAuthError, type OAuthErrorCode } from './errors.js';
export type { AuthLimits, AuthLogger, AuthServerOptions, AuthUser, SigningAlgorithm } from './options.js';
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
  const keys = await openKeyRing(input);
  const tokens = new AccessTokens(options, keys, stores.denylist, stores.clients);
  const server: ServerContext = {
    options,
    stores,
    keys,
    tokens,
    clientAuth: new ClientAuthenticator(options, stores.clients, stores.counters),
  };

  const pages = authorizeEndpoints(server);
  const routes = routeTable(server, pages);
  const middleware = routerOf(routes, options.logger).routes() as Middleware;

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

/**
 * Every path of the server. Paths come from the configured URLs, so {base_url} and {auth_url} may be one origin or
 * two hosts (Envoy routes by host; each path exists once either way). The registration management route comes
 * first: everything under the registration endpoint's path is a client id.
 */
function routeTable(server: ServerContext, pages: ReturnType<typeof authorizeEndpoints>): Route[] {
  const { options } = server;
  const pathOf = (url: string) => new URL(url).pathname;
  const registrationPath = pathOf(options.endpoints.registration);
  const clientIdOf = (ctx: Context) => decodeClientId(ctx.path.slice(registrationPath.length + 1));
  const manage = registrationManagementEndpoints(server, clientIdOf);
  const metadata = metadataEndpoint(server);
  const routes: Route[] = [
    {
      name: 'registration management',
      path: new RegExp(`^${escapeRegExp(registrationPath)}/`),
      methods: { GET: manage.read, PUT: manage.update, DELETE: manage.delete },
      client: {},
    },
    ...options.metadataPaths.map((path) => ({
      name: `metadata ${path}`,
      path,
      methods: { GET: metadata },
      client: { cacheControl: PUBLIC_CACHE },
    })),
    // Short cache: a rotated-in key must reach verifiers before it signs (the next key is published early).
    {
      name: 'jwks',
      path: pathOf(options.endpoints.jwks),
      methods: { GET: jwksEndpoint(server) },
      client: { cacheControl: PUBLIC_CACHE },
    },
    {
      name: 'registration',
      path: registrationPath,
      methods: { POST: registrationEndpoint(server) },
      client: {},
    },
    {
      name: 'token',
      path: pathOf(options.endpoints.token),
      methods: { POST: tokenEndpoint(server) },
      client: {},
    },
    {
      name: 'introspection',
      path: pathOf(options.endpoints.introspection),
      methods: { POST: introspectionEndpoint(server) },
      client: {},
    },
    {
      name: 'authorization',
      path: pathOf(options.endpoints.authorization),
      methods: { GET: pages.authorize },
    },
    { name: 'login', path: pathOf(options.endpoints.login), methods: { POST: pages.login } },
    {
      name: 'consent',
      path: pathOf(options.endpoints.consent),
      methods: { GET: pages.consentForm, POST: pages.consent },
    },
  ];
  if (pages.upstream) {
    routes.push(
      {
        name: 'upstream sign-in',
        path: pathOf(options.endpoints.upstreamStart),
        methods: { POST: pages.upstream.start },
      },
      {
        name: 'upstream callback',
        path: pathOf(options.endpoints.upstreamCallback),
        methods: { GET: pages.upstream.callback },
      },
    );
  }
  return routes;
}

/** A client id that is not valid percent-encoding stays as written: no client has it, so it is refused like any unknown one. */
function decodeClientId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}
