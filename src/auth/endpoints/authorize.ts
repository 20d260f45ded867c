import type { Context } from 'koa';
import { parseQuery, readForm } from '../body.js';
import { resolveRedirectUri } from '../clients.js';
import { DUMMY_PASSWORD_HASH, digest, randomToken, safeEqual, verifyPassword } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { readCookie, setCookie } from '../http.js';
import { isKnownSubject } from '../options.js';
import { consentPage, describeScope, errorPage, loginPage, type RenderedPage } from '../pages.js';
import { PKCE_VALUE } from '../pkce.js';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord, InteractionRecord, SessionRecord } from '../stores/types.js';
import { canonicalResource } from '../tokens.js';
import { upstreamEndpoints } from '../upstream/endpoints.js';

export const SESSION_COOKIE = 'portcullis_auth';

const SESSION_ID = /^[A-Za-z0-9_-]{20,64}$/;

/**
 * The longest value each authorization request parameter may have. What a pending request keeps comes from these
 * (the rest is validated against the registration or the configuration), so an anonymous caller cannot make the
 * server hold more than a few KB per request. Generous for real clients: a state or nonce is usually under 100
 * characters; a redirect URI can be registered with up to 2000.
 */
const PARAMETER_LIMITS: ReadonlyMap<string, number> = new Map([
  ['response_type', 32],
  ['client_id', 128],
  ['redirect_uri', 2048],
  ['scope', 1024],
  ['state', 1024],
  ['nonce', 256],
  ['code_challenge', 128],
  ['code_challenge_method', 16],
  ['resource', 2048],
]);

/**
 * The authorization endpoint (OAuth 2.1 §4.1.1) and its login and consent pages.
 *
 * Errors come in two phases. Phase 1 (client unknown, redirect URI missing or not registered) is shown to the
 * user as a page and never redirected. Phase 2 errors (response_type, PKCE, scope, resource) are redirected to
 * the validated redirect URI with state and iss — but only once the user has signed in, so an
 * attacker-registered client cannot use this server as an open redirector (OAuth 2.1 §7.12.2).
 *
 * Browser state: an HttpOnly SameSite=Lax session cookie identifies the browser session (rotated at login);
 * each pending request is an interaction record bound to that session with its own CSRF token. A form posted
 * from another session, another interaction, or without the token is refused with 403 and issues nothing.
 */
export function authorizeEndpoints(server: ServerContext) {
  const { options, stores } = server;
  const cookiePath = new URL(options.endpoints.authorization).pathname;
  const baseOrigin = new URL(options.baseUrl).origin;
  const loginChoices = {
    passwords: options.users.size > 0 || options.upstream === undefined,
    ...(options.upstream
      ? { upstream: { action: options.endpoints.upstreamStart, name: options.upstream.name } }
      : {}),
  };

  function pageHeaders(ctx: Context): void {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    ctx.set('X-Frame-Options', 'DENY');
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on the pages' own form posts,
    // which the same-origin check must refuse. Cross-origin requests still get no Referer.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
  }

  function render(ctx: Context, status: number, rendered: RenderedPage): void {
    ctx.set('Content-Security-Policy', rendered.csp);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = rendered.html;
  }

  function showError(ctx: Context, status: number, code: string, message: string): void {
    render(ctx, status, errorPage(code, message));
  }

  /** 303 after a POST (never 307, OAuth 2.1 §7.5.4). */
  function redirectTo(ctx: Context, target: string, params: Record<string, string | undefined>): void {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
    query.set('iss', options.issuer);
    ctx.status = 303;
    ctx.set('Location', `${target}${target.includes('?') ? '&' : '?'}${query}`);
    ctx.body = '';
  }

  function redirectError(
    ctx: Context,
    interaction: InteractionRecord,
    code: string,
    description: string,
  ): void {
    redirectTo(ctx, interaction.redirectTarget, {
      error: code,
      error_description: description,
      state: interaction.state,
    });
  }

  /**
   * A signed-in session is a stored record; a browser that has not signed in is only its cookie's random id
   * (what its pending requests are bound to), so anonymous visits store no session.
   */
  async function loadSession(ctx: Context): Promise<SessionRecord | undefined> {
    const id = readCookie(ctx, SESSION_COOKIE);
    if (!id || !SESSION_ID.test(id)) return undefined;
    return (await stores.sessions.get(id)) ?? { id, expiresAt: options.clock() + options.sessionTtl };
  }

  async function newSession(ctx: Context, sub?: string, name?: string): Promise<SessionRecord> {
    const now = options.clock();
    const session: SessionRecord = {
      id: randomToken(),
      expiresAt: now + options.sessionTtl,
      ...(sub === undefined ? {} : { sub, authTime: now }),
      ...(name === undefined ? {} : { name }),
    };
    if (sub !== undefined) await stores.sessions.set(session.id, session, session.expiresAt);
    setCookie(ctx, SESSION_COOKIE, session.id, {
      secure: options.cookieSecure,
      path: cookiePath,
      maxAge: options.sessionTtl,
    });
    return session;
  }

  async function clientName(clientId: string): Promise<string> {
    const client = await stores.clients.get(clientId);
    return client?.metadata.client_name ?? `client ${clientId}`;
  }

  function consentKey(sub: string, clientId: string): string {
    return `${sub}\n${clientId}`;
  }

  async function consentRemembered(sub: string, interaction: InteractionRecord): Promise<boolean> {
    const consent = await stores.consents.get(consentKey(sub, interaction.clientId));
    return (
      consent !== undefined &&
      interaction.scope.every((s) => consent.scope.includes(s)) &&
      consent.resources.includes(interaction.resource)
    );
  }

  async function issueCode(
    ctx: Context,
    interaction: InteractionRecord,
    session: SessionRecord,
  ): Promise<void> {
    const now = options.clock();
    const code = randomToken();
    const grantId = randomToken(18);
    await stores.grants.put({
      id: grantId,
      clientId: interaction.clientId,
      sub: session.sub!,
      scope: interaction.scope,
      resource: interaction.resource,
      createdAt: now,
      expiresAt: now + options.refreshTokenTtl,
      revoked: false,
    });
    await stores.codes.put({
      id: digest(code),
      clientId: interaction.clientId,
      redirectUri: interaction.redirectUriParam,
      codeChallenge: interaction.codeChallenge,
      codeChallengeMethod: interaction.codeChallengeMethod,
      scope: interaction.scope,
      resource: interaction.resource,
      sub: session.sub!,
      authTime: session.authTime ?? now,
      grantId,
      expiresAt: now + options.codeTtl,
      consumed: false,
    });
    await stores.interactions.delete(interaction.id);
    redirectTo(ctx, interaction.redirectTarget, { code, state: interaction.state });
  }

  async function renderConsent(
    ctx: Context,
    interaction: InteractionRecord,
    session: SessionRecord,
  ): Promise<void> {
    const user = options.users.get(session.sub!);
    render(
      ctx,
      200,
      consentPage({
        action: options.endpoints.consent,
        interaction: interaction.id,
        csrf: interaction.csrf,
        clientName: await clientName(interaction.clientId),
        redirectHost: new URL(interaction.redirectTarget).host,
        userName: user?.name ?? session.name ?? session.sub!,
        scopes: interaction.scope.map((name) => ({ name, description: describeScope(name) })),
        resource: interaction.resource,
      }),
    );
  }

  /** After sign-in (or with an existing session): deliver a pending error, skip a remembered consent, or ask. */
  async function proceed(
    ctx: Context,
    interaction: InteractionRecord,
    session: SessionRecord,
  ): Promise<void> {
    if (interaction.pendingError) {
      await stores.interactions.delete(interaction.id);
      redirectError(ctx, interaction, interaction.pendingError.code, interaction.pendingError.description);
    } else if (await consentRemembered(session.sub!, interaction)) {
      await issueCode(ctx, interaction, session);
    } else if (ctx.method === 'POST') {
      ctx.status = 303;
      ctx.set('Location', `${options.endpoints.consent}?interaction=${encodeURIComponent(interaction.id)}`);
      ctx.body = '';
    } else {
      await renderConsent(ctx, interaction, session);
    }
  }

  /** Phase 2 checks; the first failure is returned (not thrown) because it is delivered after sign-in. */
  function checkRequest(params: Map<string, string>, client: ClientRecord) {
    const responseType = params.get('response_type');
    if (responseType === undefined)
      return { error: new OAuthError('invalid_request', 'response_type is required') };
    if (responseType !== 'code') {
      return {
        error: new OAuthError(
          'unsupported_response_type',
          `response_type "${responseType}" is not supported`,
        ),
      };
    }
    const challenge = params.get('code_challenge');
    if (challenge === undefined)
      return { error: new OAuthError('invalid_request', 'code_challenge is required (PKCE)') };
    // OAuth 2.1 §4.1.1: an absent method means plain.
    const method = params.get('code_challenge_method') ?? 'plain';
    const methods = options.allowPlainPkce ? ['S256', 'plain'] : ['S256'];
    if (!params.has('code_challenge_method') && !methods.includes('plain')) {
      return {
        error: new OAuthError(
          'invalid_request',
          'code_challenge_method is required and must be S256 (without it the method is plain, which this server refuses)',
        ),
      };
    }
    if (!methods.includes(method)) {
      return {
        error: new OAuthError(
          'invalid_request',
          `code_challenge_method must be ${methods.join(' or ')}, got "${method}"`,
        ),
      };
    }
    if (!PKCE_VALUE.test(challenge)) {
      return {
        error: new OAuthError(
          'invalid_request',
          'code_challenge must be 43-128 characters of A-Z a-z 0-9 - . _ ~',
        ),
      };
    }
    // A client registered for a product's scopes keeps only those that still exist (products change on reload).
    const allowed = client.metadata.scope
      ? client.metadata.scope.split(' ').filter((s) => options.scopes.includes(s))
      : options.scopes;
    const requested = params.get('scope');
    const scope =
      requested === undefined ? allowed : [...new Set(requested.split(' ').filter((s) => s !== ''))];
    const unknown = scope.filter((s) => !allowed.includes(s));
    if (unknown.length > 0)
      return {
        error: new OAuthError('invalid_scope', `unknown or unregistered scope: ${unknown.join(' ')}`),
      };
    const requestedResource = params.get('resource');
    const resource =
      requestedResource === undefined
        ? options.resources[0]!
        : options.resources.find((r) => r === canonicalResource(requestedResource));
    if (resource === undefined) {
      return {
        error: new OAuthError(
          'invalid_target',
          `resource "${requestedResource}" is not served by this server`,
        ),
      };
    }
    return { challenge, method: method as 'S256' | 'plain', scope, resource };
  }

  /** Counts an authorization request of the caller's address; false (after a 429 page) past the limit. */
  async function withinAuthorizationLimit(ctx: Context): Promise<boolean> {
    const { authorizationsPerAddress, authorizationWindowSeconds } = options.limits;
    const address = options.clientAddress(ctx);
    const { count, resetAt } = await stores.counters.increment(
      `authorize:address:${address}`,
      authorizationWindowSeconds,
    );
    if (count <= authorizationsPerAddress) return true;
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
    showError(
      ctx,
      429,
      'temporarily_unavailable',
      'too many authorization requests from this address; try again later',
    );
    return false;
  }

  /** GET {base_url}/v1/authorize */
  async function authorize(ctx: Context): Promise<void> {
    pageHeaders(ctx);
    if (!(await withinAuthorizationLimit(ctx))) return;
    let params: Map<string, string>;
    try {
      params = parseQuery(ctx.querystring);
    } catch (err) {
      // A repeated client_id or redirect_uri leaves no trustworthy redirect target: show, never redirect.
      return showError(ctx, 400, 'invalid_request', (err as OAuthError).message);
    }
    // Shown, never redirected: an oversized state could not be returned, and before sign-in this server redirects
    // to no one (OAuth 2.1 §7.12.2).
    for (const [name, value] of params) {
      const max = PARAMETER_LIMITS.get(name);
      if (max !== undefined && value.length > max) {
        return showError(
          ctx,
          400,
          'invalid_request',
          `${name} must be at most ${max} characters, got ${value.length}`,
        );
      }
    }
    const clientId = params.get('client_id');
    if (clientId === undefined) return showError(ctx, 400, 'invalid_request', 'client_id is required');
    const client = await stores.clients.get(clientId);
    if (!client) return showError(ctx, 400, 'invalid_client', 'the client is not registered');
    const redirectUriParam = params.get('redirect_uri');
    const redirectTarget = resolveRedirectUri(client, redirectUriParam);
    if (redirectTarget === undefined) {
      return showError(
        ctx,
        400,
        'invalid_request',
        redirectUriParam === undefined
          ? 'redirect_uri is required when the client has several registered'
          : 'redirect_uri is not registered for this client',
      );
    }

    const checked = checkRequest(params, client);
    let session = await loadSession(ctx);
    if (!session) session = await newSession(ctx);
    const now = options.clock();
    const interaction: InteractionRecord = {
      id: randomToken(),
      sessionId: session.id,
      csrf: randomToken(),
      clientId,
      redirectTarget,
      redirectUriParam,
      state: params.get('state'),
      codeChallenge: checked.error ? '' : checked.challenge,
      codeChallengeMethod: checked.error ? 'S256' : checked.method,
      scope: checked.error ? [] : checked.scope,
      resource: checked.error ? '' : checked.resource,
      ...(checked.error
        ? { pendingError: { code: checked.error.code, description: checked.error.message } }
        : {}),
      expiresAt: now + options.interactionTtl,
    };
    if (session.sub !== undefined && isKnownSubject(options, session.sub)) {
      if (interaction.pendingError)
        return redirectError(
          ctx,
          interaction,
          interaction.pendingError.code,
          interaction.pendingError.description,
        );
      await stores.interactions.set(interaction.id, interaction, interaction.expiresAt);
      return proceed(ctx, interaction, session);
    }
    await stores.interactions.set(interaction.id, interaction, interaction.expiresAt);
    render(
      ctx,
      200,
      loginPage({
        action: options.endpoints.login,
        interaction: interaction.id,
        csrf: interaction.csrf,
        clientName: client.metadata.client_name ?? `client ${clientId}`,
        ...loginChoices,
      }),
    );
  }

  /**
   * Shared checks of the two form posts: same origin, strict form, a live interaction bound to this browser
   * session, and its CSRF token. Returns undefined after rendering a 403/400 page.
   */
  async function checkPost(ctx: Context) {
    const origin = ctx.get('Origin');
    if (origin && origin !== baseOrigin) {
      showError(ctx, 403, 'access_denied', 'the form was posted from another site');
      return undefined;
    }
    let form: Map<string, string>;
    try {
      form = await readForm(ctx.req);
    } catch (err) {
      const error = err instanceof OAuthError ? err : new OAuthError('invalid_request', 'unreadable form');
      showError(ctx, error.status, error.code, error.message);
      return undefined;
    }
    const session = await loadSession(ctx);
    const id = form.get('interaction');
    const interaction = id === undefined ? undefined : await stores.interactions.get(id);
    const csrf = form.get('csrf') ?? '';
    if (
      !session ||
      !interaction ||
      // the copy kept for an upstream sign-in is only for its callback; posting it would fork the request
      interaction.upstream !== undefined ||
      interaction.sessionId !== session.id ||
      !safeEqual(csrf, interaction.csrf)
    ) {
      showError(
        ctx,
        403,
        'access_denied',
        'this form has expired or was not sent from this browser; start again from the application',
      );
      return undefined;
    }
    return { form, session, interaction };
  }

  /** POST {base_url}/v1/authorize/login */
  async function login(ctx: Context): Promise<void> {
    pageHeaders(ctx);
    const checked = await checkPost(ctx);
    if (!checked) return;
    const { form, interaction } = checked;
    const username = form.get('username') ?? '';
    const password = form.get('password') ?? '';
    const { limits } = options;
    const address = options.clientAddress(ctx);
    const user = options.users.get(username);
    // Only a name that is an account goes to the log: a wrong one may be a password typed in the wrong field.
    const event = { address, client_id: interaction.clientId, ...(user ? { username } : {}) };
    const accountKey = `login:account:${username}`;
    const addressKey = `login:address:${address}`;
    const [account, perAddress] = await Promise.all([
      stores.counters.get(accountKey),
      stores.counters.get(addressKey),
    ]);
    const blocked = [
      account && account.count >= limits.loginFailuresPerAccount
        ? { limit: 'login.account' as const, ...account }
        : undefined,
      perAddress && perAddress.count >= limits.loginFailuresPerAddress
        ? { limit: 'login.address' as const, ...perAddress }
        : undefined,
    ].find((c) => c !== undefined);
    const view = {
      action: options.endpoints.login,
      interaction: interaction.id,
      csrf: interaction.csrf,
      clientName: await clientName(interaction.clientId),
      username,
      ...loginChoices,
    };
    if (blocked) {
      const retryAfter = Math.max(1, blocked.resetAt - options.clock());
      options.securityEvent('rate_limit.refused', {
        ...event,
        limit: blocked.limit,
        retry_after: retryAfter,
      });
      ctx.set('Retry-After', String(retryAfter));
      return render(
        ctx,
        429,
        loginPage({ ...view, error: 'Too many failed sign-in attempts. Try again later.' }),
      );
    }
    const ok = await verifyPassword(password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (!user || !ok) {
      const [accountNow, addressNow] = await Promise.all([
        stores.counters.increment(accountKey, limits.loginWindowSeconds),
        stores.counters.increment(addressKey, limits.loginWindowSeconds),
      ]);
      options.securityEvent('login.failed', { ...event, reason: user ? 'wrong_password' : 'unknown_user' });
      // The failure that reaches a limit starts the lockout; later refusals are rate_limit.refused.
      for (const [limit, counter, max] of [
        ['login.account', accountNow, limits.loginFailuresPerAccount],
        ['login.address', addressNow, limits.loginFailuresPerAddress],
      ] as const) {
        if (counter.count === max) {
          options.securityEvent('login.locked', {
            ...event,
            limit,
            retry_after: Math.max(1, counter.resetAt - options.clock()),
          });
        }
      }
      return render(ctx, 401, loginPage({ ...view, error: 'The user name or password is not correct.' }));
    }
    await stores.counters.reset(accountKey);
    options.securityEvent('login.succeeded', event);
    // A new session id at sign-in defeats session fixation; the interaction follows the browser to it.
    await stores.sessions.delete(checked.session.id);
    const session = await newSession(ctx, user.username);
    const moved = { ...interaction, sessionId: session.id };
    await stores.interactions.set(moved.id, moved, moved.expiresAt);
    await proceed(ctx, moved, session);
  }

  /** GET {base_url}/v1/authorize/consent?interaction=… (the page after sign-in) */
  async function consentForm(ctx: Context): Promise<void> {
    pageHeaders(ctx);
    const session = await loadSession(ctx);
    let id: string | undefined;
    try {
      id = parseQuery(ctx.querystring).get('interaction');
    } catch {}
    const interaction = id === undefined ? undefined : await stores.interactions.get(id);
    if (!session?.sub || !interaction || interaction.upstream || interaction.sessionId !== session.id) {
      return showError(
        ctx,
        403,
        'access_denied',
        'this authorization request has expired; start again from the application',
      );
    }
    await renderConsent(ctx, interaction, session);
  }

  /** POST {base_url}/v1/authorize/consent */
  async function consent(ctx: Context): Promise<void> {
    pageHeaders(ctx);
    const checked = await checkPost(ctx);
    if (!checked) return;
    const { form, session, interaction } = checked;
    if (session.sub === undefined || !isKnownSubject(options, session.sub)) {
      return showError(ctx, 403, 'access_denied', 'sign in first');
    }
    const decision = form.get('decision');
    if (decision === 'deny') {
      await stores.interactions.delete(interaction.id);
      return redirectError(ctx, interaction, 'access_denied', 'the user denied the request');
    }
    if (decision !== 'allow') return showError(ctx, 400, 'invalid_request', 'decision must be allow or deny');
    const key = consentKey(session.sub, interaction.clientId);
    const previous = await stores.consents.get(key);
    await stores.consents.set(
      key,
      {
        scope: [...new Set([...(previous?.scope ?? []), ...interaction.scope])],
        resources: [...new Set([...(previous?.resources ?? []), interaction.resource])],
      },
      options.clock() + options.refreshTokenTtl,
    );
    await issueCode(ctx, interaction, session);
  }

  const upstream = options.upstream
    ? upstreamEndpoints(server, { pageHeaders, showError, checkPost, loadSession, newSession, proceed })
    : undefined;

  return { authorize, login, consentForm, consent, upstream };
}
