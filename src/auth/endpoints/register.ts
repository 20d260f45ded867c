import type { Context } from 'koa';
import { readJsonObject } from '../body.js';
import { validateClientMetadata } from '../clients.js';
import { digest, randomToken, safeEqual } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { sendJson } from '../http.js';
import { isLoopbackAddress } from '../loopback.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord } from '../stores/types.js';

/**
 * RFC 7591 dynamic registration and RFC 7592 management. Secrets and registration access tokens are
 * returned once and stored only as digests; nothing secret is logged. CORS, no-store and the JSON error come from
 * clientEndpoint() in front of each handler.
 */
export function registrationEndpoint(server: ServerContext) {
  return async (ctx: Context) => {
    const address = server.options.clientAddress(ctx);
    await limitRegistrations(server, address);
    const metadata = validateClientMetadata(await readJsonObject(ctx.req), server.options.scopes);
    const now = server.options.clock();
    const clientId = randomToken(16);
    const secret = metadata.token_endpoint_auth_method === 'none' ? undefined : randomToken(32);
    const registrationToken = randomToken(32);
    const client: ClientRecord = {
      clientId,
      ...(secret ? { secretDigest: digest(secret) } : {}),
      registrationTokenDigest: digest(registrationToken),
      issuedAt: now,
      secretExpiresAt: 0,
      metadata,
    };
    await server.stores.clients.put(client);
    server.options.securityEvent('client.registered', {
      address,
      client_id: clientId,
      auth_method: metadata.token_endpoint_auth_method,
    });
    sendJson(ctx, 201, {
      ...clientResponse(server, client),
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      registration_access_token: registrationToken,
    });
  };
}

async function limitRegistrations(server: ServerContext, address: string): Promise<void> {
  const { registrationsPerAddress, registrationsPerLoopbackAddress, registrationWindowSeconds } =
    server.options.limits;
  const loopback = isLoopbackAddress(address);
  const limit = loopback ? registrationsPerLoopbackAddress : registrationsPerAddress;
  const { count, resetAt } = await server.stores.counters.increment(
    `register:${address}`,
    registrationWindowSeconds,
  );
  if (count > limit) {
    const retryAfter = Math.max(1, resetAt - server.options.clock());
    server.options.securityEvent('rate_limit.refused', {
      address,
      limit: 'registration',
      retry_after: retryAfter,
    });
    // Says how to raise it: one developer running several clients reaches it first (RFC 7591 leaves the limit to
    // the server; the description is for the people reading the client's error).
    const setting = loopback ? 'registrationsPerLoopbackAddress' : 'registrationsPerAddress';
    throw new OAuthError(
      'temporarily_unavailable',
      `too many registrations from this address (${limit} per ${registrationWindowSeconds} s); retry later, or raise auth.limits.${setting} in the gateway configuration`,
      { headers: { 'Retry-After': String(retryAfter) } },
    );
  }
}

function clientResponse(server: ServerContext, client: ClientRecord): Record<string, unknown> {
  return {
    client_id: client.clientId,
    client_id_issued_at: client.issuedAt,
    ...client.metadata,
    registration_client_uri: `${server.options.endpoints.registration}/${encodeURIComponent(client.clientId)}`,
  };
}

/** The client id a request to `{registration_endpoint}/{client_id}` names (decoded by the route). */
export type ClientIdOf = (ctx: Context) => string;

/** RFC 7592 read (GET), update (PUT) and delete (DELETE) at `{registration_endpoint}/{client_id}`. */
export function registrationManagementEndpoints(server: ServerContext, clientIdOf: ClientIdOf) {
  return {
    async read(ctx: Context): Promise<void> {
      const client = await authenticateRegistration(server, ctx, clientIdOf(ctx));
      sendJson(ctx, 200, clientResponse(server, client));
    },

    async update(ctx: Context): Promise<void> {
      const client = await authenticateRegistration(server, ctx, clientIdOf(ctx));
      const body = await readJsonObject(ctx.req);
      if (body.client_id !== client.clientId) {
        throw new OAuthError(
          'invalid_client_metadata',
          'client_id in the body must equal the client being updated',
        );
      }
      if (
        body.client_secret !== undefined &&
        !safeEqual(digest(String(body.client_secret)), client.secretDigest ?? '')
      ) {
        throw new OAuthError('invalid_client_metadata', 'client_secret does not match the current secret');
      }
      const metadata = validateClientMetadata(body, server.options.scopes);
      if (
        (metadata.token_endpoint_auth_method === 'none') !==
        (client.metadata.token_endpoint_auth_method === 'none')
      ) {
        throw new OAuthError(
          'invalid_client_metadata',
          'a client cannot switch between public and confidential',
        );
      }
      const updated = { ...client, metadata };
      await server.stores.clients.put(updated);
      server.options.securityEvent('client.updated', {
        address: server.options.clientAddress(ctx),
        client_id: client.clientId,
        auth_method: metadata.token_endpoint_auth_method,
      });
      sendJson(ctx, 200, clientResponse(server, updated));
    },

    async delete(ctx: Context): Promise<void> {
      const client = await authenticateRegistration(server, ctx, clientIdOf(ctx));
      // From now on its access tokens are refused (AccessTokens.verify) and its refresh tokens and codes can no
      // longer be redeemed (client authentication finds no client).
      await server.stores.clients.delete(client.clientId);
      server.options.securityEvent('client.deleted', {
        address: server.options.clientAddress(ctx),
        client_id: client.clientId,
      });
      ctx.status = 204;
    },
  };
}

async function authenticateRegistration(
  server: ServerContext,
  ctx: Context,
  clientId: string,
): Promise<ClientRecord> {
  const challenge = { 'WWW-Authenticate': 'Bearer error="invalid_token"' };
  const m = /^Bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(ctx.get('Authorization'));
  const client = await server.stores.clients.get(clientId);
  // Unknown client and wrong token look the same (RFC 7592 §2: 401, no existence oracle).
  if (!m || !client || !safeEqual(digest(m[1]!), client.registrationTokenDigest ?? '')) {
    throw new OAuthError('invalid_token', 'the registration access token is invalid', { headers: challenge });
  }
  return client;
}
