import { digest, safeEqual } from './crypto.js';
import { OAuthError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import type { ClientRecord, ClientStore, CounterStore, TokenEndpointAuthMethod } from './stores/types.js';

export interface AuthenticatedClient {
  client: ClientRecord;
  method: TokenEndpointAuthMethod;
}

interface Presented {
  method: TokenEndpointAuthMethod;
  clientId: string;
  secret?: string;
}

/** RFC 6749 Appendix B: the Basic user name and password are form-urlencoded before base64. */
function formDecode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, '%20'));
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Which credentials the request carries. Exactly one mechanism is allowed (OAuth 2.1 §2.4). */
export function presentedCredentials(
  authorization: string | undefined,
  form: Map<string, string>,
): Presented {
  const bodyId = form.get('client_id');
  const bodySecret = form.get('client_secret');
  if (authorization !== undefined) {
    const m = /^Basic +(\S+)$/i.exec(authorization.trim());
    if (!m || !BASE64.test(m[1]!) || m[1]!.length % 4 !== 0) {
      throw basicFailure('the Authorization header is not valid Basic credentials', 'invalid_request', 400);
    }
    const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw basicFailure('the Basic credentials must be client_id:client_secret');
    let clientId: string;
    let secret: string;
    try {
      clientId = formDecode(decoded.slice(0, colon));
      secret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw basicFailure('the Basic credentials are not form-urlencoded', 'invalid_request', 400);
    }
    if (bodySecret !== undefined) {
      throw new OAuthError(
        'invalid_request',
        'use one client authentication method: Basic or client_secret, not both',
      );
    }
    if (bodyId !== undefined && bodyId !== clientId) {
      throw new OAuthError('invalid_request', 'client_id in the body differs from the Basic credentials');
    }
    return { method: 'client_secret_basic', clientId, secret };
  }
  if (bodyId === undefined) {
    throw new OAuthError(
      'invalid_client',
      'client authentication is required (Basic, client_secret_post or client_id)',
    );
  }
  if (bodySecret !== undefined) return { method: 'client_secret_post', clientId: bodyId, secret: bodySecret };
  return { method: 'none', clientId: bodyId };
}

function basicFailure(
  description: string,
  code: 'invalid_client' | 'invalid_request' = 'invalid_client',
  status = 401,
) {
  return new OAuthError(code, description, { status });
}

/**
 * Authenticates the client of a token, revocation or introspection request. Failures are `invalid_client`
 * 401 with a `WWW-Authenticate: Basic` challenge when Basic was used (RFC 6749 §5.2). Repeated failures for
 * one client from one address are refused with 429 before the secret is even compared.
 */
export class ClientAuthenticator {
  constructor(
    private readonly options: ResolvedOptions,
    private readonly clients: ClientStore,
    private readonly counters: CounterStore,
  ) {}

  async authenticate(
    authorization: string | undefined,
    form: Map<string, string>,
    address: string,
  ): Promise<AuthenticatedClient> {
    const presented = presentedCredentials(authorization, form);
    const challenge =
      presented.method === 'client_secret_basic'
        ? { 'WWW-Authenticate': `Basic realm="${this.options.issuer}", error="invalid_client"` }
        : undefined;
    const refuse = (description: string) =>
      new OAuthError('invalid_client', description, challenge ? { headers: challenge } : undefined);

    const counterKey = `client-auth:${presented.clientId}:${address}`;
    const { limits } = this.options;
    const failures = await this.counters.get(counterKey);
    if (failures && failures.count >= limits.clientAuthFailures) {
      const retryAfter = Math.max(1, failures.resetAt - this.options.clock());
      this.options.securityEvent('rate_limit.refused', {
        address,
        client_id: presented.clientId,
        limit: 'client_auth',
        retry_after: retryAfter,
      });
      throw new OAuthError('temporarily_unavailable', 'too many failed client authentications; retry later', {
        headers: { 'Retry-After': String(retryAfter) },
      });
    }

    const client = await this.clients.get(presented.clientId);
    // What the client is told, and the short reason the security log records.
    let problem: { description: string; reason: string } | undefined;
    if (!client) problem = { description: 'unknown client', reason: 'unknown_client' };
    else if (client.metadata.token_endpoint_auth_method !== presented.method) {
      problem = {
        description: `the client is registered for ${client.metadata.token_endpoint_auth_method}, not ${presented.method}`,
        reason: 'wrong_method',
      };
    } else if (presented.secret !== undefined) {
      // Both digests are computed on every path, so the comparison time does not depend on the stored secret.
      const ok = safeEqual(digest(presented.secret), client.secretDigest ?? '');
      if (!ok) problem = { description: 'client authentication failed', reason: 'wrong_secret' };
      else if (client.secretExpiresAt !== 0 && client.secretExpiresAt <= this.options.clock()) {
        problem = { description: 'the client secret has expired', reason: 'secret_expired' };
      }
    }
    if (problem !== undefined || !client) {
      if (presented.secret !== undefined)
        await this.counters.increment(counterKey, limits.clientAuthWindowSeconds);
      this.options.securityEvent('client_auth.failed', {
        address,
        client_id: presented.clientId,
        auth_method: presented.method,
        reason: problem?.reason ?? 'unknown_client',
      });
      throw refuse(problem?.description ?? 'unknown client');
    }
    return { client, method: presented.method };
  }
}
