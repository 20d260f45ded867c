import type { JWK } from 'jose';
import type { Context } from 'koa';
import { type Logger, processLogger } from '../log.js';
import type { DelegatedTokens } from '../state/delegated-tokens.js';
import { AddressPolicy } from './client-documents/address.js';
import type { ClientDocumentOptions } from './client-documents/directory.js';
import { parsePasswordHash } from './crypto.js';
import { isLoopbackHost } from './loopback.js';
import {
  processSecurityLog,
  type SecurityEventFields,
  type SecurityEventType,
  type SecurityLog,
  securityEvent,
} from './security-events.js';
import type { AuthStores } from './stores/types.js';
import { type ResolvedUpstream, resolveUpstream, type UpstreamProviderOptions } from './upstream/options.js';

export type SigningAlgorithm = 'ES256' | 'RS256' | 'EdDSA';

export interface AuthUser {
  username: string;
  /** `scrypt$N$r$p$salt$key`, as produced by hashPassword(). */
  passwordHash: string;
  name?: string;
}

export interface AuthServerOptions {
  /** {auth_url}: the issuer; token, registration, revocation, introspection and JWKS endpoints live here. */
  issuer: string;
  /** {base_url}: the authorization endpoint (with the login and consent pages) and the MCP host. */
  baseUrl: string;
  /** RFC 8707 resources tokens may be issued for; the first is the default audience. Default `${baseUrl}/v1/mcp`. */
  resource?: string[];
  /** Scope names are `read:<product>-work` and `write:<product>-work`. */
  products: string[];
  users: AuthUser[];
  accessTokenTtlSeconds?: number;
  refreshTokenTtlSeconds?: number;
  codeTtlSeconds?: number;
  /** Lifetime of a login session cookie. */
  sessionTtlSeconds?: number;
  /**
   * Default true (the service specification lists plain, and OAuth 2.1 §4.1.1 reads a missing method as plain);
   * when false, `plain` and a missing method are refused and plain is no longer advertised. The risk of true is
   * described at `auth.allowPlainPkce` in src/config/service-schema.ts.
   */
  allowPlainPkce?: boolean;
  /**
   * Private JWKs (with `kid` and `alg`); the first signs, all are published. When omitted, a current and a
   * next key of `algorithm` (default ES256) are generated at start.
   */
  signingKeys?: { algorithm?: SigningAlgorithm; keys?: JWK[] };
  /** Secure cookies; default true. False only for plain-http development. */
  cookieSecure?: boolean;
  /** Abuse limits; every window is in seconds. */
  limits?: Partial<AuthLimits>;
  /** Injected stores; in-memory by default. */
  stores?: AuthStores;
  /**
   * A directory for durable single-machine state: registered clients and generated signing keys survive a
   * restart. When `stores` is given, they hold the clients (a `clients.json` left here is imported into them once);
   * keys from `signingKeys.keys` are never written.
   */
  dataDir?: string;
  /** Epoch seconds; injected by tests to move time. */
  clock?: () => number;
  logger?: Logger;
  /**
   * The address of the client that sent a request: the key of the per-address limits and the `address` of
   * security events. Default the TCP peer; behind a proxy, the address the proxy determined (never a value the
   * client wrote, such as X-Forwarded-For's first entry).
   */
  clientAddress?: (ctx: Context) => string;
  /** Where security events go (src/auth/security-events.ts); default one JSON line each on stderr. */
  securityLog?: SecurityLog;
  /** client_id put in service tokens minted by mintServiceToken(). Default `portcullis-mcp`. */
  serviceClientId?: string;
  /** An upstream OpenID Connect provider offered on the login page besides the configured users. */
  identityProvider?: UpstreamProviderOptions;
  /**
   * Where the upstream provider's tokens of a user who signs in through it are kept, for the engine's
   * user-delegated connections (get-authorization-context); absent: they are not kept.
   */
  delegatedTokens?: DelegatedTokens;
  /**
   * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP 2025-11-25 way for a client
   * to identify itself): a client_id that is an https URL names the client's metadata, fetched from there. On by
   * default; the other keys are limits and development allowances.
   */
  clientMetadataDocuments?: ClientMetadataDocumentsOptions;
}

export interface ClientMetadataDocumentsOptions {
  /** Default true. False: an https client_id is refused and the metadata does not advertise support. */
  enabled?: boolean;
  /**
   * Development only: CIDR ranges (`127.0.0.1/32`) a document may be fetched from although they are not public.
   * Without it only public unicast addresses are contacted.
   */
  allowedNetworks?: string[];
  /** Development only: certificate authorities (PEM text) trusted for document hosts besides the system's. */
  ca?: string;
  /** The whole fetch, DNS to last byte; default 5000. */
  timeoutMs?: number;
  /** Largest document; default 5120 bytes. */
  maxBytes?: number;
  /** Kept this long when the response has no Cache-Control max-age; default 300. */
  defaultCacheSeconds?: number;
  /** Kept at most this long whatever max-age says; default 86400. */
  maxCacheSeconds?: number;
  /** Documents cached per process at most; default 1000. */
  maxCachedDocuments?: number;
}

export interface AuthLimits {
  loginFailuresPerAccount: number;
  loginFailuresPerAddress: number;
  loginWindowSeconds: number;
  registrationsPerAddress: number;
  /**
   * The same limit for a client on a loopback address (a developer's own machine, whose clients all register
   * from one address). Unless set: `registrationsPerAddress` when that is set, else 200.
   */
  registrationsPerLoopbackAddress: number;
  registrationWindowSeconds: number;
  clientAuthFailures: number;
  clientAuthWindowSeconds: number;
  /** Authorization requests (GET /v1/authorize) one address may start per window. */
  authorizationsPerAddress: number;
  authorizationWindowSeconds: number;
  /**
   * Pending authorization requests kept in memory (without Redis) at most; past it the oldest is dropped (its
   * user starts again). Each is at most a few KB (the parameters' lengths are capped).
   */
  pendingAuthorizations: number;
}

const DEFAULT_LIMITS: AuthLimits = {
  loginFailuresPerAccount: 5,
  loginFailuresPerAddress: 20,
  loginWindowSeconds: 15 * 60,
  registrationsPerAddress: 20,
  registrationsPerLoopbackAddress: 200,
  registrationWindowSeconds: 60 * 60,
  clientAuthFailures: 10,
  clientAuthWindowSeconds: 5 * 60,
  authorizationsPerAddress: 60,
  authorizationWindowSeconds: 60,
  pendingAuthorizations: 5000,
};

/** Options after validation: every default applied, every URL derived once. */
export interface ResolvedOptions {
  issuer: string;
  baseUrl: string;
  resources: string[];
  /**
   * The only option that changes while the server runs (setProducts). Replaced whole, never edited in place, so a
   * handler holding it sees one consistent list; handlers read it per request.
   */
  scopes: string[];
  users: Map<string, AuthUser>;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  codeTtl: number;
  sessionTtl: number;
  interactionTtl: number;
  allowPlainPkce: boolean;
  cookieSecure: boolean;
  limits: AuthLimits;
  clock: () => number;
  logger: Logger;
  clientAddress: (ctx: Context) => string;
  /** Records one security event (no secrets in `fields`: see security-events.ts). */
  securityEvent: (type: SecurityEventType, fields: SecurityEventFields) => void;
  serviceClientId: string;
  upstream: ResolvedUpstream | undefined;
  delegatedTokens: DelegatedTokens | undefined;
  /** Undefined when client metadata documents are disabled. */
  clientDocuments: ClientDocumentOptions | undefined;
  endpoints: {
    authorization: string;
    login: string;
    consent: string;
    token: string;
    registration: string;
    introspection: string;
    jwks: string;
    /** Start and callback of the upstream sign-in; under /v1/authorize/ so Envoy routes them to the service. */
    upstreamStart: string;
    upstreamCallback: string;
  };
  /** Paths at which the RFC 8414 document is served. */
  metadataPaths: string[];
}

const KNOWN_KEYS = new Set([
  'issuer',
  'baseUrl',
  'resource',
  'products',
  'users',
  'accessTokenTtlSeconds',
  'refreshTokenTtlSeconds',
  'codeTtlSeconds',
  'sessionTtlSeconds',
  'allowPlainPkce',
  'signingKeys',
  'cookieSecure',
  'limits',
  'stores',
  'dataDir',
  'clock',
  'logger',
  'clientAddress',
  'securityLog',
  'serviceClientId',
  'identityProvider',
  'delegatedTokens',
  'clientMetadataDocuments',
]);

const DOCUMENT_KEYS = new Set([
  'enabled',
  'allowedNetworks',
  'ca',
  'timeoutMs',
  'maxBytes',
  'defaultCacheSeconds',
  'maxCacheSeconds',
  'maxCachedDocuments',
]);

function resolveClientDocuments(
  input: ClientMetadataDocumentsOptions | undefined,
): ClientDocumentOptions | undefined {
  const where = 'clientMetadataDocuments';
  for (const key of Object.keys(input ?? {}))
    if (!DOCUMENT_KEYS.has(key)) fail(`${where}.${key}`, 'is not a known option');
  if (input?.enabled === false) return undefined;
  if (input?.allowedNetworks !== undefined && !Array.isArray(input.allowedNetworks))
    fail(`${where}.allowedNetworks`, 'must be an array of CIDR ranges');
  const allowedNetworks = input?.allowedNetworks ?? [];
  const invalid = AddressPolicy.firstInvalid(allowedNetworks);
  if (invalid >= 0) {
    fail(
      `${where}.allowedNetworks[${invalid}]`,
      `must be a CIDR range such as 127.0.0.1/32, got ${JSON.stringify(allowedNetworks[invalid])}`,
    );
  }
  return {
    allowedNetworks: [...allowedNetworks],
    ca: input?.ca,
    timeoutMs: positiveInt(`${where}.timeoutMs`, input?.timeoutMs, 5000),
    maxBytes: positiveInt(`${where}.maxBytes`, input?.maxBytes, 5120),
    defaultCacheSeconds: positiveInt(`${where}.defaultCacheSeconds`, input?.defaultCacheSeconds, 300),
    maxCacheSeconds: positiveInt(`${where}.maxCacheSeconds`, input?.maxCacheSeconds, 86400),
    maxCachedDocuments: positiveInt(`${where}.maxCachedDocuments`, input?.maxCachedDocuments, 1000),
  };
}

const PRODUCT_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/i;

function fail(path: string, message: string): never {
  throw new TypeError(`auth options: ${path} ${message}`);
}

/** A server URL: absolute, https (or http on a loopback host for development), no query or fragment, no trailing slash. */
function serverUrl(path: string, value: unknown): string {
  if (typeof value !== 'string') fail(path, `must be a URL string, got ${typeof value}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(path, `must be an absolute URL, got "${value}"`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    fail(path, `must use https (http is allowed only on a loopback host), got "${value}"`);
  }
  if (url.search || url.hash || value.includes('#'))
    fail(path, `must not have a query or fragment, got "${value}"`);
  return value.replace(/\/+$/, '');
}

/** A subject this server can sign in: a configured user, or a user of the upstream provider. */
export function isKnownSubject(options: ResolvedOptions, sub: string): boolean {
  return (
    options.users.has(sub) || (options.upstream !== undefined && sub.startsWith(`${options.upstream.id}|`))
  );
}

/** The TCP peer, with an IPv4-mapped IPv6 address written as IPv4. */
export function peerAddress(ctx: Context): string {
  const peer = ctx.req.socket.remoteAddress ?? 'unknown';
  return /^::ffff:\d{1,3}(\.\d{1,3}){3}$/i.test(peer) ? peer.slice(7) : peer;
}

function positiveInt(path: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    fail(path, `must be a positive integer, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * `read:<product>-work` and `write:<product>-work` for each product, in order. Throws the options' TypeError for
 * an empty list or a name that cannot be part of a scope.
 */
export function productScopes(products: readonly string[]): string[] {
  if (!Array.isArray(products) || products.length === 0) fail('products', 'must be a non-empty array');
  const scopes: string[] = [];
  products.forEach((product, i) => {
    if (typeof product !== 'string' || !PRODUCT_NAME.test(product)) {
      fail(
        `products[${i}]`,
        `must be a product name of letters, digits, ".", "_" or "-", got ${JSON.stringify(product)}`,
      );
    }
    scopes.push(`read:${product}-work`, `write:${product}-work`);
  });
  return scopes;
}

export function resolveOptions(options: AuthServerOptions): ResolvedOptions {
  for (const key of Object.keys(options)) if (!KNOWN_KEYS.has(key)) fail(key, 'is not a known option');
  const issuer = serverUrl('issuer', options.issuer);
  const baseUrl = serverUrl('baseUrl', options.baseUrl);
  // Stored without a trailing slash; requests are compared after dropping one (clients differ on it, see
  // mcp-auth.md §6 #2), and tokens carry the configured form.
  const resources = (options.resource ?? [`${baseUrl}/v1/mcp`]).map((r, i) => serverUrl(`resource[${i}]`, r));
  if (resources.length === 0) fail('resource', 'must list at least one resource');

  const scopes = productScopes(options.products);

  if (!Array.isArray(options.users)) fail('users', 'must be an array');
  const users = new Map<string, AuthUser>();
  options.users.forEach((user, i) => {
    if (typeof user?.username !== 'string' || user.username === '')
      fail(`users[${i}].username`, 'must be a non-empty string');
    if (users.has(user.username)) fail(`users[${i}].username`, `repeats "${user.username}"`);
    try {
      parsePasswordHash(user.passwordHash);
    } catch (err) {
      fail(`users[${i}].passwordHash`, (err as Error).message);
    }
    users.set(user.username, user);
  });

  const upstream =
    options.identityProvider === undefined ? undefined : resolveUpstream(options.identityProvider);
  if (upstream) {
    for (const username of users.keys()) {
      if (username.startsWith(`${upstream.id}|`))
        fail('users', `"${username}" would be confused with a user of identityProvider "${upstream.id}"`);
    }
  }

  const accessTokenTtl = positiveInt('accessTokenTtlSeconds', options.accessTokenTtlSeconds, 3600);
  const codeTtl = positiveInt('codeTtlSeconds', options.codeTtlSeconds, 60);
  if (codeTtl > 600) fail('codeTtlSeconds', `must be at most 600 (OAuth 2.1 §4.1.2), got ${codeTtl}`);

  const limits = { ...DEFAULT_LIMITS };
  for (const [key, value] of Object.entries(options.limits ?? {})) {
    if (!(key in DEFAULT_LIMITS)) fail(`limits.${key}`, 'is not a known limit');
    limits[key as keyof AuthLimits] = positiveInt(`limits.${key}`, value, 0);
  }
  // An operator who set the limit for the world and not for loopback meant it for loopback too.
  if (
    options.limits?.registrationsPerAddress !== undefined &&
    options.limits.registrationsPerLoopbackAddress === undefined
  )
    limits.registrationsPerLoopbackAddress = limits.registrationsPerAddress;

  const issuerPath = new URL(issuer).pathname.replace(/\/$/, '');
  const metadataPaths = [
    ...new Set([
      `/.well-known/oauth-authorization-server${issuerPath}`,
      '/.well-known/oauth-authorization-server',
    ]),
  ];
  const noop = () => {};
  return {
    issuer,
    baseUrl,
    resources,
    scopes,
    users,
    accessTokenTtl,
    refreshTokenTtl: positiveInt('refreshTokenTtlSeconds', options.refreshTokenTtlSeconds, 30 * 24 * 3600),
    codeTtl,
    sessionTtl: positiveInt('sessionTtlSeconds', options.sessionTtlSeconds, 8 * 3600),
    interactionTtl: 15 * 60,
    allowPlainPkce: options.allowPlainPkce ?? true,
    cookieSecure: options.cookieSecure ?? true,
    limits,
    clock: options.clock ?? (() => Math.floor(Date.now() / 1000)),
    // Embedded without a logger (tests, a library user): failures only.
    logger: options.logger ?? { debug: noop, info: noop, warn: noop, error: processLogger.error },
    clientAddress: options.clientAddress ?? peerAddress,
    securityEvent: (type, fields) => (options.securityLog ?? processSecurityLog)(securityEvent(type, fields)),
    serviceClientId: options.serviceClientId ?? 'portcullis-mcp',
    upstream,
    delegatedTokens: options.delegatedTokens,
    clientDocuments: resolveClientDocuments(options.clientMetadataDocuments),
    endpoints: {
      authorization: `${baseUrl}/v1/authorize`,
      login: `${baseUrl}/v1/authorize/login`,
      consent: `${baseUrl}/v1/authorize/consent`,
      token: `${issuer}/v1/token`,
      registration: `${issuer}/v1/register`,
      introspection: `${issuer}/v1/introspect`,
      jwks: `${issuer}/v1/jwks`,
      upstreamStart: `${baseUrl}/v1/authorize/upstream`,
      upstreamCallback: `${baseUrl}/v1/authorize/upstream/callback`,
    },
    metadataPaths,
  };
}
