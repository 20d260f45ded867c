import { parseQuery } from '../body.js';
import { MAX_CLIENT_ID_URL_LENGTH } from '../client-documents/document.js';
import { ClientDocumentError } from '../client-documents/errors.js';
import { resolveRedirectUri } from '../clients.js';
import { randomToken } from '../crypto.js';
import type { OAuthError } from '../errors.js';
import type { ClientRecord, InteractionRecord } from '../stores/types.js';
import { established, type Step } from './steps.js';

/**
 * Phase 1 of GET {base_url}/v1/authorize (OAuth 2.1 §4.1.1): what must hold before this server may redirect to
 * anyone. Each failure is shown to the user as a page and never redirected (§7.12.2). The phase 2 checks
 * (checks.ts) are redirected, but only after sign-in.
 */

/**
 * The longest value each authorization request parameter may have. What a pending request keeps comes from these
 * (the rest is validated against the registration or the configuration), so an anonymous caller cannot make the
 * server hold more than a few KB per request. Generous for real clients: a state or nonce is usually under 100
 * characters; a redirect URI can be registered with up to 2000.
 */
const PARAMETER_LIMITS: ReadonlyMap<string, number> = new Map([
  ['response_type', 32],
  // A registered client_id is 22 characters; a client metadata document URL may be long.
  ['client_id', MAX_CLIENT_ID_URL_LENGTH],
  ['redirect_uri', 2048],
  ['scope', 1024],
  ['state', 1024],
  ['nonce', 256],
  ['code_challenge', 128],
  ['code_challenge_method', 16],
  ['resource', 2048],
]);

/** The values of a request that passed the phase 2 checks, or the first error, delivered after sign-in. */
export type CheckedRequest =
  | { error: OAuthError }
  | { error?: undefined; challenge: string; method: 'S256' | 'plain'; scope: string[]; resource: string };

/** Counts an authorization request of the caller's address; a 429 page past the limit. */
export const limitPerAddress: Step = {
  name: 'limit authorization requests per address',
  async run(ctx, _flow, { server, pages }) {
    const { options, stores } = server;
    const { authorizationsPerAddress, authorizationWindowSeconds } = options.limits;
    const address = options.clientAddress(ctx);
    const { count, resetAt } = await stores.counters.increment(
      `authorize:address:${address}`,
      authorizationWindowSeconds,
    );
    if (count <= authorizationsPerAddress) return 'next';
    const retryAfter = Math.max(1, resetAt - options.clock());
    // Once per window, not once per refused request: a flood must not flood the log too.
    if (count === authorizationsPerAddress + 1) {
      options.securityEvent('rate_limit.refused', {
        address,
        limit: 'authorization',
        retry_after: retryAfter,
      });
    }
    ctx.set('Retry-After', String(retryAfter));
    return pages.error(
      ctx,
      429,
      'temporarily_unavailable',
      'too many authorization requests from this address; try again later',
    );
  },
};

export const readParameters: Step = {
  name: 'read the parameters',
  async run(ctx, flow, { pages }) {
    let params: Map<string, string>;
    try {
      params = parseQuery(ctx.querystring);
    } catch (err) {
      // A repeated client_id or redirect_uri leaves no trustworthy redirect target: show, never redirect.
      return pages.error(ctx, 400, 'invalid_request', (err as OAuthError).message);
    }
    // An oversized state could not be returned either.
    for (const [name, value] of params) {
      const max = PARAMETER_LIMITS.get(name);
      if (max !== undefined && value.length > max) {
        return pages.error(
          ctx,
          400,
          'invalid_request',
          `${name} must be at most ${max} characters, got ${value.length}`,
        );
      }
    }
    flow.params = params;
    return 'next';
  },
};

export const findClient: Step = {
  name: 'find the client',
  async run(ctx, flow, { server, pages }) {
    const clientId = established(flow, 'params').get('client_id');
    if (clientId === undefined) return pages.error(ctx, 400, 'invalid_request', 'client_id is required');
    let client: ClientRecord | undefined;
    try {
      client = await server.clients.find(clientId);
    } catch (error) {
      // A client_id URL whose document cannot be used: the page says why (the developer of the client reads it).
      if (error instanceof ClientDocumentError) return pages.error(ctx, 400, 'invalid_client', error.message);
      throw error;
    }
    if (!client) return pages.error(ctx, 400, 'invalid_client', 'the client is not registered');
    flow.client = client;
    return 'next';
  },
};

export const checkRedirectUri: Step = {
  name: 'check the redirect URI',
  async run(ctx, flow, { pages }) {
    const redirectUriParam = established(flow, 'params').get('redirect_uri');
    const redirectTarget = resolveRedirectUri(established(flow, 'client'), redirectUriParam);
    if (redirectTarget === undefined) {
      return pages.error(
        ctx,
        400,
        'invalid_request',
        redirectUriParam === undefined
          ? 'redirect_uri is required when the client has several registered'
          : 'redirect_uri is not registered for this client',
      );
    }
    flow.redirectTarget = redirectTarget;
    return 'next';
  },
};

/** The pending request, bound to the browser session, with its own CSRF token (not stored yet). */
export const openInteraction: Step = {
  name: 'open the interaction',
  async run(_ctx, flow, { server }) {
    const params = established(flow, 'params');
    const checked = established(flow, 'checked');
    flow.interaction = {
      id: randomToken(),
      sessionId: established(flow, 'session').id,
      csrf: randomToken(),
      clientId: established(flow, 'client').clientId,
      redirectTarget: established(flow, 'redirectTarget'),
      redirectUriParam: params.get('redirect_uri'),
      state: params.get('state'),
      codeChallenge: checked.error ? '' : checked.challenge,
      codeChallengeMethod: checked.error ? 'S256' : checked.method,
      scope: checked.error ? [] : checked.scope,
      resource: checked.error ? '' : checked.resource,
      ...(checked.error
        ? { pendingError: { code: checked.error.code, description: checked.error.message } }
        : {}),
      expiresAt: server.options.clock() + server.options.interactionTtl,
    } satisfies InteractionRecord;
    return 'next';
  },
};
