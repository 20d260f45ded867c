import { z } from 'zod';
import { AddressPolicy } from '../auth/client-documents/address.js';
import { parsePasswordHash } from '../auth/crypto.js';
import { isLoopbackHost } from '../auth/loopback.js';

/**
 * The `auth` and `mcp` sections of the gateway configuration: the Koa service's OAuth 2.1 authorization server and
 * MCP endpoint. Strict like the rest of the file. Scopes are not configured here: they come from `products`
 * (`read:<product>-work`, `write:<product>-work`), so a product added to the gateway is a scope at once.
 */

/**
 * A server URL: http(s), no query, fragment or path. Envoy sends only the service's fixed paths (`/v1/…`,
 * `/.well-known/…`) to the Koa service, so an issuer under a path would publish endpoints nobody can reach.
 */
const serverUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http:// or https:// URL' })
  .refine((value) => !/[?#]/.test(value), { message: 'must have no query or fragment' })
  .refine((value) => value.startsWith('https://') || isLoopbackHost(new URL(value).hostname), {
    message: 'must use https (http is allowed only on a loopback host, for development)',
  })
  .refine((value) => new URL(value).pathname.replace(/\/+$/, '') === '', {
    message:
      'must be an origin without a path (Envoy routes /v1/… and /.well-known/… of every host to the service)',
  });

/** `scrypt$N$r$p$salt$key`, as `portcullis hash-password` prints it; checked by the AS's own parser. */
export const passwordHash = z.string().superRefine((value, ctx) => {
  try {
    parsePasswordHash(value);
  } catch (error) {
    ctx.addIssue({
      code: 'custom',
      message: `${(error as Error).message.replace(/^passwordHash /, '').replace(/ \(see hashPassword\(\)\)/, '')} (make one with \`portcullis hash-password\`)`,
    });
  }
});

const positiveInt = z.number().int().positive();
const seconds = positiveInt;

const userSchema = z
  .object({
    username: z.string().min(1),
    passwordHash,
    /** Shown on the consent page. */
    name: z.string().min(1).optional(),
  })
  .strict();

const limitsSchema = z
  .object({
    loginFailuresPerAccount: positiveInt.optional(),
    loginFailuresPerAddress: positiveInt.optional(),
    loginWindowSeconds: positiveInt.optional(),
    registrationsPerAddress: positiveInt.optional(),
    /** The registration limit for clients on a loopback address (default 200, or registrationsPerAddress when set). */
    registrationsPerLoopbackAddress: positiveInt.optional(),
    registrationWindowSeconds: positiveInt.optional(),
    clientAuthFailures: positiveInt.optional(),
    clientAuthWindowSeconds: positiveInt.optional(),
    /** Authorization requests one client address may start per window (default 60 per 60 s); more get 429. */
    authorizationsPerAddress: positiveInt.optional(),
    authorizationWindowSeconds: positiveInt.optional(),
    /**
     * Pending authorization requests (started, not yet finished by sign-in and consent) kept in memory when there
     * is no Redis, default 5000; past it the oldest is dropped and its user starts again. With Redis they expire
     * after 15 minutes and the per-address limit bounds them.
     */
    pendingAuthorizations: positiveInt.optional(),
  })
  .strict();

/**
 * A secret given inline or, better, named by environment variable so the configuration file can be shared;
 * `{ env: NAME }` is read when the service starts.
 */
const secretValue = z.union([
  z.string().min(1),
  z
    .object({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'must be a variable name' }) })
    .strict(),
]);

/** `{identity_provider_url}`: an upstream OpenID Connect provider offered on the login page. */
const identityProviderSchema = z
  .object({
    /** Prefix of local subjects (`<id>|<upstream sub>`). */
    id: z
      .string()
      .regex(/^[A-Za-z0-9._-]{1,32}$/, { message: 'must be 1-32 letters, digits, ".", "_" or "-"' })
      .default('oidc'),
    /** Shown as "Sign in with <name>"; default the issuer's host. */
    name: z.string().min(1).optional(),
    /** The provider's issuer identifier (discovery at `<issuer>/.well-known/openid-configuration`). */
    issuer: z
      .string()
      .url()
      .refine((value) => value.startsWith('https://') || isLoopbackHost(new URL(value).hostname), {
        message: 'must use https (http is allowed only on a loopback host, for development)',
      })
      .refine((value) => !/[?#]/.test(value), { message: 'must have no query or fragment' }),
    clientId: z.string().min(1),
    clientSecret: secretValue,
    /** `openid` is always requested; add `profile` or `email` to show the user's name on the consent page. */
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)).default(['openid', 'profile']),
  })
  .strict();

/** CIDR text as ipaddr.js parses it (`127.0.0.1/32`, `fd00::/8`). */
const cidrRange = z.string().refine((value) => AddressPolicy.firstInvalid([value]) === -1, {
  message: 'must be a CIDR range such as 127.0.0.1/32',
});

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP authorization 2025-11-25): a
 * client_id that is an https URL names a JSON document describing the client, which the server fetches (https only,
 * public addresses only, no redirects, size and time limits) and caches per its Cache-Control.
 */
const clientMetadataDocumentsSchema = z
  .object({
    /** Accept https client_id URLs and advertise `client_id_metadata_document_supported`. */
    enabled: z.boolean().default(true),
    /**
     * Development only: networks a document may be fetched from although they are not public (loopback, private,
     * link-local). Never set it in production: it lets anyone make the server send requests into those networks.
     */
    allowedNetworks: z.array(cidrRange).default([]),
    /** Development only: a PEM file (relative to this file) of CAs trusted for document hosts besides the system's. */
    trustedCa: z.string().min(1).optional(),
    /** The whole fetch, DNS to last byte. */
    timeoutMs: z.number().int().min(100).max(30_000).default(5000),
    /** Largest document accepted. */
    maxBytes: z.number().int().min(512).max(1_048_576).default(5120),
    /** The longest a document is kept, whatever its Cache-Control max-age says (no-store keeps nothing). */
    maxCacheSeconds: seconds.max(7 * 24 * 3600).default(86400),
  })
  .strict();

export const authConfigSchema = z
  .object({
    /** {auth_url}: the issuer, where token, registration, revocation, introspection and JWKS live. */
    issuer: serverUrl,
    /** {base_url}: the MCP host and the authorization endpoint with its login and consent pages. */
    baseUrl: serverUrl,
    /** Who can log in on the login page. */
    users: z
      .array(userSchema)
      .default([])
      .superRefine((users, ctx) => {
        const seen = new Map<string, number>();
        users.forEach((user, index) => {
          const previous = seen.get(user.username);
          if (previous !== undefined) {
            ctx.addIssue({
              code: 'custom',
              path: [index, 'username'],
              message: `duplicate username "${user.username}" (also users[${previous}])`,
            });
          }
          seen.set(user.username, index);
        });
      }),
    /** Access-token lifetime (`expires_in`). */
    accessTokenTtlSeconds: seconds.default(3600),
    refreshTokenTtlSeconds: seconds.default(30 * 24 * 3600),
    /** OAuth 2.1 §4.1.2: authorization codes are short-lived. */
    codeTtlSeconds: seconds.max(600).default(60),
    /** Lifetime of the login session cookie. */
    sessionTtlSeconds: seconds.default(8 * 3600),
    /**
     * Whether PKCE `plain` is accepted (and advertised). Default true because the service specification lists
     * `plain` in `code_challenge_methods_supported` and says the server supports it; OAuth 2.1 (§4.1.1) also makes
     * an authorization request without `code_challenge_method` mean `plain`. The risk: with `plain` the challenge
     * IS the verifier, so anyone who sees the authorization request (browser history, a proxy or referrer log, a
     * malicious app on the device) can redeem an intercepted code; S256 does not have that weakness. RFC 7636 §4.2
     * lets a client use `plain` only when it cannot use S256, and OAuth 2.1 (§7.5.2) tells clients to use S256. Set false when every
     * client sends S256 (MCP clients must): `plain` and a missing method are then refused with invalid_request.
     */
    allowPlainPkce: z.boolean().default(true),
    /** Secure session cookies; false only for plain-http development on loopback. */
    cookieSecure: z.boolean().default(true),
    signingKeys: z
      .object({
        /** The algorithm of generated keys (ignored when `file` gives keys: theirs is used). */
        algorithm: z.enum(['ES256', 'RS256', 'EdDSA']).default('ES256'),
        /**
         * A JSON file (relative to this configuration file) holding a JWK Set of private keys, each with `kid`
         * and `alg`; the first signs, all are published. Without it keys are generated at start (and kept in
         * `dataDir` when one is set).
         */
        file: z.string().min(1).optional(),
      })
      .strict()
      .optional(),
    /**
     * A directory (relative to this configuration file) for state that must survive a restart on one machine:
     * registered clients and generated signing keys. Without it, both live in memory only.
     */
    dataDir: z.string().min(1).optional(),
    limits: limitsSchema.optional(),
    /** Sign-in through an upstream OpenID Connect provider, besides (or instead of) `users`. */
    identityProvider: identityProviderSchema.optional(),
    clientMetadataDocuments: clientMetadataDocumentsSchema.default({
      enabled: true,
      allowedNetworks: [],
      timeoutMs: 5000,
      maxBytes: 5120,
      maxCacheSeconds: 86400,
    }),
  })
  .strict();

/** A browser origin: scheme, host and port only. */
const origin = z
  .string()
  .url()
  .refine((value) => new URL(value).origin === value, {
    message: 'must be a bare origin such as https://app.example.com (no path, no trailing slash)',
  });

export const mcpConfigSchema = z
  .object({
    /** Browser origins allowed to call the endpoint besides its own; any other `Origin` is refused with 403. */
    allowedOrigins: z.array(origin).default([]),
    /**
     * `Host` values (with port) accepted by the endpoint; others are 403. DNS-rebinding protection for
     * deployments on a developer's machine. Every host when absent. A browser `Origin` whose host[:port] is listed
     * is accepted too (the endpoint's own names), besides `allowedOrigins`.
     */
    allowedHosts: z.array(z.string().min(1)).min(1).optional(),
    /** Answer POSTs as one JSON body (default) or as an SSE stream when the client accepts both. */
    responseMode: z.enum(['json', 'sse']).default('json'),
    /** Tools per `tools/list` page. */
    pageSize: z.number().int().min(1).max(1000).default(100),
    /**
     * Most messages in one JSON-RPC batch (revision 2025-03-26 only): a bigger batch is refused whole with
     * -32600 and HTTP 400, since each `tools/call` in it becomes a call through the gateway.
     */
    maxBatchSize: z.number().int().min(1).max(1000).default(50),
    /** Requests of one batch that run at the same time; the others wait their turn. */
    batchConcurrency: z.number().int().min(1).max(64).default(4),
    /**
     * POSTs carrying requests that one MCP session may have running at once, counted over every service process
     * sharing `state.redis`; one more is refused with HTTP 429 and JSON-RPC -32000 until one answers.
     */
    maxConcurrentRequestsPerSession: z.number().int().min(1).max(256).default(8),
    /**
     * Lifetime of the token the MCP service mints for each tool call it sends through the gateway (subject: the
     * user; audience: the API's gateway URL). Short, because it is used at once.
     */
    serviceTokenTtlSeconds: seconds.max(3600).default(60),
    /**
     * The gateway's public URL, used as the audience prefix of service tokens
     * (`<gatewayUrl>/<api urlSuffix>`), so an API's `validate-jwt` can require it. Default: the URL the service
     * reaches Envoy's gateway listener at (given by `portcullis up`).
     */
    gatewayUrl: z
      .string()
      .url()
      .refine((value) => /^https?:\/\/[^/?#]+\/?$/.test(value), {
        message: 'must be an http(s) origin without path, query or fragment',
      })
      .optional(),
  })
  .strict();

export type AuthConfig = z.infer<typeof authConfigSchema>;
export type McpConfig = z.infer<typeof mcpConfigSchema>;
