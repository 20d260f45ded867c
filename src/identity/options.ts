import { z } from 'zod';

/**
 * The `identities` section: where the gateway gets the tokens its own calls carry (authentication-managed-identity,
 * get-authorization-context). Policies say *what* identity a call needs (a `resource`, a `client-id`); these
 * sources say where the token comes from, so the same documents run on any host, and on Azure too.
 *
 * ```yaml
 * identities:
 *   default: entra                    # the source a policy gets when its client-id names none
 *   sources:
 *     gateway: { type: portcullis, ttlSeconds: 300 }
 *     entra:
 *       type: client-credentials
 *       tokenUrl: https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token
 *       clientId: 11111111-2222-3333-4444-555555555555
 *       clientSecret: { env: ENTRA_CLIENT_SECRET }
 *       resourceAs: entra-scope        # scope={resource}/.default
 *     vm: { type: azure-imds }
 *     workload:
 *       type: federated
 *       tokenFile: /var/run/secrets/azure/tokens/azure-identity-token
 *       tokenUrl: https://login.microsoftonline.com/<tenant>/oauth2/v2.0/token
 *       clientId: 11111111-2222-3333-4444-555555555555
 *       resourceAs: entra-scope
 *   delegatedTokenKey: { env: PORTCULLIS_DELEGATED_TOKEN_KEY }   # the engine and the service read the same
 *   credentialProviders:
 *     corp:                            # the auth.identityProvider's client: refreshes users' upstream tokens
 *       source: { type: client-credentials, tokenUrl: https://id.example/token, clientId: portcullis, clientSecret: { env: IDP_SECRET } }
 *       connections:
 *         me: { delegated: true }      # get-authorization-context identity-type="jwt": the user's own token
 *         orders: { delegated: true, scopes: [api://orders/Orders.Read] }   # the user's token for one API
 * ```
 */

/** A credential written in the file, read from an environment variable, or read from a file (relative to the config). */
export const secretValue = z.union([
  z.string().min(1),
  z
    .object({ env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: 'must be a variable name' }) })
    .strict(),
  z.object({ file: z.string().min(1) }).strict(),
]);
export type SecretValue = z.infer<typeof secretValue>;

/** An RFC 6749 scope token: printable ASCII but space, `"` and `\`. */
const scopeToken = z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, {
  message: 'must be one scope token (printable, no space, " or \\)',
});

const httpUrl = z
  .string()
  .url()
  .refine((value) => /^https?:\/\//.test(value), { message: 'must be an http:// or https:// URL' });

/**
 * How a policy's `resource` reaches the token endpoint: as RFC 8707 `resource`, as the `scope`, as an `audience`
 * parameter (Auth0 and others), or as Entra ID's v2 convention `scope={resource}/.default`.
 */
const resourceAs = z.enum(['resource', 'scope', 'audience', 'entra-scope']).default('resource');

/** What every source may say: the client id a policy's `client-id` selects it by. */
const selectable = {
  /** A policy's `client-id` selects this source when it equals this value (or the source's name). */
  clientId: z.string().min(1).optional(),
};

const portcullisSource = z
  .object({
    type: z.literal('portcullis'),
    /** `sub` and `client_id` of the tokens: the gateway itself. */
    subject: z.string().min(1).default('portcullis-gateway'),
    ttlSeconds: z.number().int().min(30).max(86_400).default(300),
    ...selectable,
  })
  .strict();

const tokenEndpointFields = {
  /** The OAuth 2.0 token endpoint. */
  tokenUrl: httpUrl,
  resourceAs,
  /** Scopes sent besides the resource mapping (space-separated in the request). */
  scopes: z.array(z.string().min(1)).default([]),
  /** Extra form parameters, for endpoints that want more. */
  parameters: z.record(z.string().min(1), z.string()).default({}),
};

const clientCredentialsSource = z
  .object({
    type: z.literal('client-credentials'),
    ...tokenEndpointFields,
    clientId: z.string().min(1),
    clientAuth: z
      .enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt'])
      .default('client_secret_basic'),
    clientSecret: secretValue.optional(),
    /** private_key_jwt: a PEM (PKCS#8) or JWK private key. */
    privateKey: secretValue.optional(),
    /** private_key_jwt: the JWS algorithm of the client assertion. */
    privateKeyAlgorithm: z.enum(['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA']).default('RS256'),
    /** private_key_jwt: the `kid` of the client assertion's header (Entra wants `x5t` instead: see `x5t`). */
    keyId: z.string().min(1).optional(),
    /**
     * private_key_jwt: the X.509 certificate (PEM) of privateKey, when privateKey's PEM does not hold it already:
     * its thumbprints go in the assertion's header, as Entra ID matches certificate credentials by them.
     */
    certificate: secretValue.optional(),
    /** private_key_jwt with a certificate: the thumbprint headers (base64url SHA-1 `x5t`, SHA-256 `x5t#S256`). */
    certificateThumbprints: z
      .array(z.enum(['x5t', 'x5t#S256']))
      .min(1)
      .default(['x5t']),
    /** private_key_jwt: an `x5t` header written out (a certificate's thumbprint, computed, takes second place). */
    x5t: z.string().min(1).optional(),
  })
  .strict()
  .superRefine((source, ctx) => {
    if (source.clientAuth === 'private_key_jwt' && source.privateKey === undefined)
      ctx.addIssue({ code: 'custom', path: ['privateKey'], message: 'private_key_jwt needs privateKey' });
    if (source.clientAuth !== 'private_key_jwt' && source.clientSecret === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['clientSecret'],
        message: `${source.clientAuth} needs clientSecret`,
      });
  });

const azureImdsSource = z
  .object({
    type: z.literal('azure-imds'),
    /**
     * `imds`: the VM's Instance Metadata Service; `app-service`: App Service / Container Apps (`IDENTITY_ENDPOINT`
     * and `IDENTITY_HEADER` from the environment); `auto`: app-service when both variables are set, else imds.
     */
    protocol: z.enum(['auto', 'imds', 'app-service']).default('auto'),
    endpoint: httpUrl.default('http://169.254.169.254/metadata/identity/oauth2/token'),
    /** The user-assigned identity's client id; absent, the system-assigned identity. */
    ...selectable,
  })
  .strict();

const federatedSource = z
  .object({
    type: z.literal('federated'),
    ...tokenEndpointFields,
    clientId: z.string().min(1),
    /** The projected token (Kubernetes service account, GitHub OIDC, …), read again for every exchange. */
    tokenFile: z.string().min(1),
    /**
     * `client-assertion`: client credentials with the token as `client_assertion` (Entra workload identity
     * federation); `jwt-bearer`: the RFC 7523 authorization grant, the token as `assertion`.
     */
    grant: z.enum(['client-assertion', 'jwt-bearer']).default('client-assertion'),
  })
  .strict();

const SOURCE_TYPES = ['portcullis', 'client-credentials', 'azure-imds', 'federated'];

export const identitySourceSchema = z.discriminatedUnion(
  'type',
  [portcullisSource, clientCredentialsSource, azureImdsSource, federatedSource],
  {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? `must be one of ${SOURCE_TYPES.map((t) => `"${t}"`).join(', ')}`
        : undefined,
  },
);
export type IdentitySourceConfig = z.infer<typeof identitySourceSchema>;
export type IdentitySourceType = IdentitySourceConfig['type'];

const sourceName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, { message: 'must be 1-64 letters, digits, ".", "_" or "-"' });

/**
 * A credential manager provider (get-authorization-context's provider-id): the OAuth client it gets tokens as, and
 * its connections (authorization-id), each the resource its token is for.
 */
const credentialProviderSchema = z
  .object({
    source: z.union([clientCredentialsSource, federatedSource]),
    connections: z.record(
      sourceName,
      z.union([
        z
          .object({
            /** The audience of the connection's tokens, mapped per the source's resourceAs. */
            resource: z.string().min(1),
          })
          .strict(),
        z
          .object({
            /**
             * User-delegated: the token the user (identity-type="jwt") obtained when signing in through
             * auth.identityProvider, refreshed at the source's tokenUrl with its client (the identity provider's).
             */
            delegated: z.literal(true),
            /**
             * What this connection's token may do at the provider: asked for when the user signs in (with
             * auth.identityProvider.scopes, one consent for every connection), then each of its tokens is the
             * user's refresh token narrowed to them (RFC 6749 §6). Empty: the sign-in's own token.
             */
            scopes: z.array(scopeToken).default([]),
          })
          .strict(),
      ]),
    ),
  })
  .strict();
export type CredentialProviderConfig = z.infer<typeof credentialProviderSchema>;

export const identitiesConfigSchema = z
  .object({
    /** The source used when a policy's client-id selects none; absent: `portcullis` when `auth` is on, or the only source. */
    default: sourceName.optional(),
    sources: z.record(sourceName, identitySourceSchema).default({}),
    /**
     * Where validate-azure-ad-token reads tenants' OpenID configurations when a policy names no
     * authentication-endpoint: a sovereign cloud (https://login.microsoftonline.us, …) or a test provider.
     */
    entraAuthority: httpUrl.optional(),
    /**
     * Seals the upstream tokens the authorization server keeps for user-delegated connections (AES-256-GCM, key
     * derived with HKDF); the engine and the service must read the same value. At least 16 characters.
     */
    delegatedTokenKey: secretValue.optional(),
    /** get-authorization-context's credential manager: providers by provider-id, with their connections. */
    credentialProviders: z.record(sourceName, credentialProviderSchema).default({}),
  })
  .strict()
  .superRefine((identities, ctx) => {
    if (
      identities.default !== undefined &&
      identities.default !== 'portcullis' &&
      !(identities.default in identities.sources)
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `names no source "${identities.default}" (configured: ${Object.keys(identities.sources).join(', ') || 'none'})`,
      });
    }
  });
export type IdentitiesConfig = z.infer<typeof identitiesConfigSchema>;
