import type { Context } from 'koa';
import { GRANTS } from '../grants/index.js';
import { sendJson } from '../http.js';
import type { ServerContext } from '../server-context.js';

export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
/** Introspection reveals token contents, so public clients cannot call it. */
export const INTROSPECTION_AUTH_METHODS = ['client_secret_basic', 'client_secret_post'] as const;

/**
 * RFC 8414 metadata. Every value is derived from the same definitions the endpoints use (the grants map,
 * the PKCE switch, the scope list), so what is advertised cannot drift from what is accepted.
 */
export function buildMetadata(server: ServerContext): Record<string, unknown> {
  const { options } = server;
  return {
    issuer: options.issuer,
    authorization_endpoint: options.endpoints.authorization,
    token_endpoint: options.endpoints.token,
    registration_endpoint: options.endpoints.registration,
    revocation_endpoint: options.endpoints.token,
    introspection_endpoint: options.endpoints.introspection,
    jwks_uri: options.endpoints.jwks,
    scopes_supported: options.scopes,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [...GRANTS.keys()],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    introspection_endpoint_auth_methods_supported: [...INTROSPECTION_AUTH_METHODS],
    code_challenge_methods_supported: options.allowPlainPkce ? ['S256', 'plain'] : ['S256'],
    authorization_response_iss_parameter_supported: true,
    // draft-ietf-oauth-client-id-metadata-document §5; MCP 2025-11-25 clients prefer it to registration.
    ...(server.clients.documentsSupported ? { client_id_metadata_document_supported: true } : {}),
  };
}

/** How long clients may cache the metadata and the JWKS (declared with their routes). */
export const PUBLIC_CACHE = 'public, max-age=300';

export function metadataEndpoint(server: ServerContext) {
  // Serialized once per scope list: setProducts() replaces options.scopes whole, so a new array is the one sign
  // that the document changed, and the next request serves the new one.
  let scopes = server.options.scopes;
  let document = JSON.stringify(buildMetadata(server));
  // The MCP-Protocol-Version request header (spec §4.1 #2) is accepted and needs no tailoring: one document
  // serves every protocol version.
  return async (ctx: Context) => {
    if (scopes !== server.options.scopes) {
      scopes = server.options.scopes;
      document = JSON.stringify(buildMetadata(server));
    }
    ctx.status = 200;
    ctx.type = 'application/json';
    ctx.body = document;
  };
}

export function jwksEndpoint(server: ServerContext) {
  return async (ctx: Context) => {
    ctx.type = 'application/jwk-set+json';
    sendJson(ctx, 200, server.keys.publicJwks(server.options.clock(), server.options.accessTokenTtl));
    ctx.type = 'application/jwk-set+json';
  };
}
