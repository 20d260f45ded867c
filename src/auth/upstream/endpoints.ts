import type { Context } from 'koa';
import { parseQuery } from '../body.js';
import { digest } from '../crypto.js';
import type { ServerContext } from '../server-context.js';
import type { InteractionRecord, SessionRecord } from '../stores/types.js';
import { UpstreamClient, UpstreamError } from './client.js';
import { upstreamSubject } from './options.js';

/** What the authorization endpoint lends the upstream sign-in (all closures over its own state). */
export interface InteractionHelpers {
  pageHeaders(ctx: Context): void;
  showError(ctx: Context, status: number, code: string, message: string): void;
  /** The CSRF/session/interaction checks of the login form; undefined after rendering a refusal. */
  checkPost(ctx: Context): Promise<{ session: SessionRecord; interaction: InteractionRecord } | undefined>;
  loadSession(ctx: Context): Promise<SessionRecord | undefined>;
  newSession(ctx: Context, sub?: string, name?: string): Promise<SessionRecord>;
  proceed(ctx: Context, interaction: InteractionRecord, session: SessionRecord): Promise<void>;
}

/** Where a pending upstream sign-in is kept: keyed by the digest of its state, so only the callback finds it. */
function attemptKey(state: string): string {
  return `upstream:${digest(state)}`;
}

/**
 * Sign-in through the upstream OpenID Connect provider, inside a pending authorization request:
 *
 * POST {base_url}/v1/authorize/upstream (from the login page, CSRF-checked like the password form) keeps state,
 * nonce and PKCE verifier server-side and sends the browser to the provider. GET
 * {base_url}/v1/authorize/upstream/callback finds the attempt by state (one use: a replayed or forged callback
 * finds nothing), requires the same browser session, exchanges the code, verifies the ID token, then signs the
 * browser in as `<id>|<sub>` and continues the same interaction (consent, then a code for the client).
 * Every failure is shown as a page: the client's redirect URI is only used by the interaction's own flow.
 */
export function upstreamEndpoints(server: ServerContext, helpers: InteractionHelpers) {
  const { options, stores } = server;
  const upstream = options.upstream!;
  const client = new UpstreamClient(upstream, options.endpoints.upstreamCallback, options.clock);

  async function start(ctx: Context): Promise<void> {
    helpers.pageHeaders(ctx);
    const checked = await helpers.checkPost(ctx);
    if (!checked) return;
    const { interaction } = checked;
    let started: Awaited<ReturnType<UpstreamClient['start']>>;
    try {
      started = await client.start();
    } catch (err) {
      return fail(ctx, err);
    }
    const pending: InteractionRecord = {
      ...interaction,
      upstream: { interactionId: interaction.id, ...started.attempt },
    };
    await stores.interactions.set(attemptKey(started.attempt.state), pending, interaction.expiresAt);
    ctx.status = 303;
    ctx.set('Location', started.url);
    ctx.body = '';
  }

  async function callback(ctx: Context): Promise<void> {
    helpers.pageHeaders(ctx);
    let state: string | undefined;
    try {
      state = parseQuery(ctx.querystring).get('state');
    } catch {}
    const key = state === undefined ? undefined : attemptKey(state);
    const pending = key === undefined ? undefined : await stores.interactions.get(key);
    // delete() is true for exactly one caller, so two racing copies of one callback cannot both sign in.
    if (!pending?.upstream || !(await stores.interactions.delete(key!))) {
      return helpers.showError(
        ctx,
        400,
        'invalid_request',
        `this answer from ${upstream.name} does not belong to a sign-in in progress (unknown or already used state); start again from the application`,
      );
    }
    const session = await helpers.loadSession(ctx);
    const interaction = await stores.interactions.get(pending.upstream.interactionId);
    if (
      !session ||
      pending.sessionId !== session.id ||
      !interaction ||
      interaction.sessionId !== session.id
    ) {
      return helpers.showError(
        ctx,
        403,
        'access_denied',
        'this sign-in was not started from this browser or has expired; start again from the application',
      );
    }
    let identity: Awaited<ReturnType<UpstreamClient['finish']>>;
    try {
      identity = await client.finish(new URLSearchParams(ctx.querystring), pending.upstream);
    } catch (err) {
      return fail(ctx, err);
    }
    const sub = upstreamSubject(upstream, identity.sub);
    options.securityEvent('login.succeeded', {
      address: options.clientAddress(ctx),
      client_id: interaction.clientId,
      username: sub,
    });
    // A new session id at sign-in defeats session fixation; the interaction follows the browser to it.
    await stores.sessions.delete(session.id);
    const signedIn = await helpers.newSession(ctx, sub, identity.name ?? identity.email);
    const moved = { ...interaction, sessionId: signedIn.id };
    await stores.interactions.set(moved.id, moved, moved.expiresAt);
    await helpers.proceed(ctx, moved, signedIn);
  }

  function fail(ctx: Context, err: unknown): void {
    if (!(err instanceof UpstreamError)) throw err;
    options.logger.warn('upstream sign-in refused', { code: err.code, detail: err.detail ?? err.message });
    options.securityEvent('login.failed', {
      address: options.clientAddress(ctx),
      reason: `upstream_${err.code}`,
    });
    helpers.showError(ctx, err.code === 'temporarily_unavailable' ? 502 : 400, err.code, err.message);
  }

  return { start, callback };
}
