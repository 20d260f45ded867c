import type { Context, Middleware, Next } from 'koa';
import { ClientAuthenticator } from './client-auth.js';
import { authorizeEndpoints } from './endpoints/authorize.js';
import { buildMetadata, jwksEndpoint, metadataEndpoint } from './endpoints/metadata.js';
import { registrationEndpoint, registrationManagementEndpoint } from './endpoints/register.js';
import { introspectionEndpoint, tokenEndpoint } from './endpoints/token.js';
import { OAuthError } from './errors.js';
import { allowCors } from './http.js';
import { KeyRing } from './keys.js';
import { type AuthServerOptions, productScopes, resolveOptions } from './options.js';
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

type Handler = (ctx: Context) => Promise<void>;

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

  const pathOf = (url: string) => new URL(url).pathname;
  const pages = authorizeEndpoints(server);
  const metadata = metadataEndpoint(server);

  // The route table: path → method → handler. Paths come from the configured URLs, so {base_url} and
  // {auth_url} may be one origin or two hosts (Envoy routes by host; each path exists once either way).
  const routes = new Map<string, Partial<Record<string, Handler>>>();
  const route = (path: string, methods: Partial<Record<string, Handler>>) => {
    routes.set(path, { ...routes.get(path), ...methods });
  };
  for (const path of options.metadataPaths) route(path, { GET: metadata });
  route(pathOf(options.endpoints.jwks), { GET: jwksEndpoint(server) });
  route(pathOf(options.endpoints.registration), { POST: registrationEndpoint(server) });
  route(pathOf(options.endpoints.token), { POST: tokenEndpoint(server) });
  route(pathOf(options.endpoints.introspection), { POST: introspectionEndpoint(server) });
  route(pathOf(options.endpoints.authorization), { GET: pages.authorize });
  route(pathOf(options.endpoints.login), { POST: pages.login });
  route(pathOf(options.endpoints.consent), { GET: pages.consentForm, POST: pages.consent });
  if (pages.upstream) {
    route(pathOf(options.endpoints.upstreamStart), { POST: pages.upstream.start });
    route(pathOf(options.endpoints.upstreamCallback), { GET: pages.upstream.callback });
  }

  const registrationPrefix = `${pathOf(options.endpoints.registration)}/`;
  const manageRegistration = registrationManagementEndpoint(server);
  const corsPaths = new Set([
    ...options.metadataPaths,
    pathOf(options.endpoints.jwks),
    pathOf(options.endpoints.registration),
    pathOf(options.endpoints.token),
    pathOf(options.endpoints.introspection),
  ]);

  const middleware: Middleware = async (ctx: Context, next: Next) => {
    if (ctx.path.startsWith(registrationPrefix)) {
      const clientId = decodeURIComponent(ctx.path.slice(registrationPrefix.length));
      if (ctx.method === 'OPTIONS') return preflight(ctx, 'GET, PUT, DELETE');
      if (!['GET', 'PUT', 'DELETE'].includes(ctx.method)) return methodNotAllowed(ctx, 'GET, PUT, DELETE');
      return manageRegistration(ctx, clientId);
    }
    const methods = routes.get(ctx.path);
    if (!methods) return next();
    const allowed = Object.keys(methods).join(', ');
    if (ctx.method === 'OPTIONS' && corsPaths.has(ctx.path)) return preflight(ctx, allowed);
    const handler = methods[ctx.method] ?? (ctx.method === 'HEAD' ? methods.GET : undefined);
    if (!handler) return methodNotAllowed(ctx, allowed);
    await handler(ctx);
  };

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

function preflight(ctx: Context, methods: string): void {
  allowCors(ctx, methods);
  ctx.status = 204;
}

function methodNotAllowed(ctx: Context, allowed: string): void {
  ctx.set('Allow', allowed);
  const error = new OAuthError('invalid_request', `method ${ctx.method} is not allowed here`);
  ctx.status = 405;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(error.toJSON());
}
