import type { Context } from 'koa';
import { readForm } from '../body.js';
import { digest } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { GRANTS } from '../grants/index.js';
import { sendJson } from '../http.js';
import { revokeGrant, type ServerContext } from '../server-context.js';
import type { GrantType } from '../stores/types.js';

/**
 * The token endpoint, which is also the RFC 7009 revocation endpoint (spec §2.1). A request with a
 * `grant_type` is a token request; one without it but with `token` is a revocation (token requests always
 * carry grant_type, RFC 6749 §4.1.3/§6). Either way the form is parsed once, strictly, and the same client
 * authentication runs. CORS, no-store and the JSON error come from clientEndpoint() in front of it.
 */
export function tokenEndpoint(server: ServerContext) {
  return async (ctx: Context) => {
    const form = await readForm(ctx.req);
    const grantType = form.get('grant_type');
    if (grantType === undefined && form.has('token')) {
      await revoke(server, ctx, form);
      return;
    }
    if (grantType === undefined) throw new OAuthError('invalid_request', 'grant_type is required');
    // For the service's metrics (a bounded label: only the grant types this server knows).
    if (GRANTS.has(grantType as GrantType)) ctx.state.grantType = grantType;
    const address = server.options.clientAddress(ctx);
    const { client } = await server.clientAuth.authenticate(
      ctx.get('Authorization') || undefined,
      form,
      address,
    );
    const grant = GRANTS.get(grantType as GrantType);
    if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type "${grantType}" is not supported`);
    if (!client.metadata.grant_types.includes(grant.name)) {
      throw new OAuthError('unauthorized_client', `the client is not registered for the ${grant.name} grant`);
    }
    sendJson(ctx, 200, await grant.handle({ form, client, server, address }));
  };
}

/**
 * RFC 7009. Unknown, expired, malformed and foreign tokens all get 200 (§2.2) so the endpoint is no oracle;
 * a foreign token is left untouched. Revoking a refresh token revokes its whole grant; revoking an access
 * token denylists its jti until it expires. The hint only orders the lookup (§2.1: search all types).
 */
async function revoke(server: ServerContext, ctx: Context, form: Map<string, string>): Promise<void> {
  const { client } = await server.clientAuth.authenticate(
    ctx.get('Authorization') || undefined,
    form,
    server.options.clientAddress(ctx),
  );
  const token = form.get('token')!;
  const lookups = [revokeRefreshToken, revokeAccessToken];
  if (form.get('token_type_hint') === 'access_token') lookups.reverse();
  for (const lookup of lookups) if (await lookup(server, token, client.clientId)) break;
  ctx.status = 200;
  ctx.body = '';
}

async function revokeRefreshToken(server: ServerContext, token: string, clientId: string): Promise<boolean> {
  const record = await server.stores.refreshTokens.find(digest(token));
  if (!record) return false;
  if (record.clientId === clientId) await revokeGrant(server, record.grantId);
  return true;
}

async function revokeAccessToken(server: ServerContext, token: string, clientId: string): Promise<boolean> {
  if (token.split('.').length !== 3) return false;
  try {
    const claims = await server.tokens.verifySignature(token);
    if (claims.client_id === clientId) await server.stores.denylist.add(claims.jti, claims.exp);
    return true;
  } catch {
    return false; // expired or not ours: nothing to revoke
  }
}

/**
 * RFC 7662 introspection, for confidential clients. A client only learns about tokens issued to itself;
 * anything else is `{"active": false}`, the same answer as for an unknown token.
 */
export function introspectionEndpoint(server: ServerContext) {
  return async (ctx: Context) => {
    const form = await readForm(ctx.req);
    const { client, method } = await server.clientAuth.authenticate(
      ctx.get('Authorization') || undefined,
      form,
      server.options.clientAddress(ctx),
    );
    if (method === 'none')
      throw new OAuthError('invalid_client', 'introspection requires a confidential client');
    const token = form.get('token');
    if (token === undefined) throw new OAuthError('invalid_request', 'token is required');
    sendJson(ctx, 200, await introspect(server, token, client.clientId));
  };
}

async function introspect(
  server: ServerContext,
  token: string,
  clientId: string,
): Promise<Record<string, unknown>> {
  const inactive = { active: false };
  if (token.split('.').length === 3) {
    try {
      const claims = await server.tokens.verifySignature(token);
      if (claims.client_id !== clientId || (await server.stores.denylist.has(claims.jti))) return inactive;
      return { active: true, token_type: 'Bearer', ...claims };
    } catch {
      return inactive;
    }
  }
  const record = await server.stores.refreshTokens.find(digest(token));
  if (
    !record ||
    record.consumed ||
    record.clientId !== clientId ||
    record.expiresAt <= server.options.clock()
  ) {
    return inactive;
  }
  const grant = await server.stores.grants.get(record.grantId);
  if (!grant || grant.revoked) return inactive;
  return {
    active: true,
    token_type: 'refresh_token',
    client_id: record.clientId,
    sub: record.sub,
    scope: record.scope.join(' '),
    aud: record.resource,
    iss: server.options.issuer,
    iat: record.issuedAt,
    exp: record.expiresAt,
  };
}
