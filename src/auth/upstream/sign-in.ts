import type { Context } from 'koa';
import type { FlowServices, Step, StepResult } from '../authorize/steps.js';
import { established } from '../authorize/steps.js';
import { parseQuery } from '../body.js';
import { digest } from '../crypto.js';
import type { InteractionRecord } from '../stores/types.js';
import { type UpstreamClient, UpstreamError } from './client.js';
import { upstreamSubject } from './options.js';

/**
 * Sign-in through the upstream OpenID Connect provider, inside a pending authorization request: steps of the
 * authorization flow (src/auth/authorize/index.ts lists them).
 *
 * POST {base_url}/v1/authorize/upstream (from the login page, CSRF-checked like the password form) keeps state,
 * nonce and PKCE verifier server-side and sends the browser to the provider. GET
 * {base_url}/v1/authorize/upstream/callback finds the attempt by state (one use: a replayed or forged callback
 * finds nothing), requires the same browser session, exchanges the code, verifies the ID token, then signs the
 * browser in as `<id>|<sub>` and continues the same interaction (consent, then a code for the client).
 * Every failure is shown as a page: the client's redirect URI is only used by the interaction's own flow.
 */

/** Where a pending upstream sign-in is kept: keyed by the digest of its state, so only the callback finds it. */
function attemptKey(state: string): string {
  return `upstream:${digest(state)}`;
}

function clientOf(services: FlowServices): UpstreamClient {
  if (!services.upstream)
    throw new TypeError('authorization flow: an upstream step runs without an upstream provider');
  return services.upstream;
}

export const redirectToProvider: Step = {
  name: 'redirect to the upstream provider',
  async run(ctx, flow, services) {
    const interaction = established(flow, 'interaction');
    let started: Awaited<ReturnType<UpstreamClient['start']>>;
    try {
      started = await clientOf(services).start();
    } catch (err) {
      return refused(ctx, err, services);
    }
    const pending: InteractionRecord = {
      ...interaction,
      upstream: { interactionId: interaction.id, ...started.attempt },
    };
    await services.server.stores.interactions.set(
      attemptKey(started.attempt.state),
      pending,
      interaction.expiresAt,
    );
    return services.pages.seeOther(ctx, started.url);
  },
};

export const findUpstreamAttempt: Step = {
  name: 'find the upstream attempt',
  async run(ctx, flow, { server, pages, sessions }) {
    const { stores } = server;
    let state: string | undefined;
    try {
      state = parseQuery(ctx.querystring).get('state');
    } catch {}
    const key = state === undefined ? undefined : attemptKey(state);
    const pending = key === undefined ? undefined : await stores.interactions.get(key);
    // delete() is true for exactly one caller, so two racing copies of one callback cannot both sign in.
    if (!pending?.upstream || !(await stores.interactions.delete(key!))) {
      return pages.error(
        ctx,
        400,
        'invalid_request',
        `this answer from ${server.options.upstream!.name} does not belong to a sign-in in progress (unknown or already used state); start again from the application`,
      );
    }
    const session = await sessions.load(ctx);
    const interaction = await stores.interactions.get(pending.upstream.interactionId);
    if (
      !session ||
      pending.sessionId !== session.id ||
      !interaction ||
      interaction.sessionId !== session.id
    ) {
      return pages.error(
        ctx,
        403,
        'access_denied',
        'this sign-in was not started from this browser or has expired; start again from the application',
      );
    }
    flow.session = session;
    flow.interaction = interaction;
    flow.upstreamAttempt = pending.upstream;
    return 'next';
  },
};

export const finishUpstreamSignIn: Step = {
  name: 'finish the upstream sign-in',
  async run(ctx, flow, services) {
    const { options } = services.server;
    let signedIn: Awaited<ReturnType<UpstreamClient['finish']>>;
    try {
      signedIn = await clientOf(services).finish(
        new URLSearchParams(ctx.querystring),
        established(flow, 'upstreamAttempt'),
      );
    } catch (err) {
      return refused(ctx, err, services);
    }
    const { identity, tokens } = signedIn;
    const sub = upstreamSubject(options.upstream!, identity.sub);
    if (options.delegatedTokens !== undefined) {
      // For get-authorization-context's user-delegated connections (the engine reads them by this subject). The
      // sign-in does not depend on it: a store that fails leaves the user without delegated tokens, logged.
      const now = options.clock() * 1000;
      try {
        await options.delegatedTokens.write(sub, {
          accessToken: tokens.accessToken,
          ...(tokens.refreshToken === undefined ? {} : { refreshToken: tokens.refreshToken }),
          expiresAt: now + (tokens.expiresIn ?? 300) * 1000,
          obtainedAt: now,
          scope: tokens.scope,
        });
      } catch (err) {
        options.logger.error('upstream tokens not kept for delegated connections', {
          user: sub,
          error: (err as Error).message,
        });
      }
    }
    options.securityEvent('login.succeeded', {
      address: options.clientAddress(ctx),
      client_id: established(flow, 'interaction').clientId,
      username: sub,
    });
    const name = identity.name ?? identity.email;
    flow.identity = { sub, ...(name === undefined ? {} : { name }) };
    return 'next';
  },
};

function refused(ctx: Context, err: unknown, { server, pages }: FlowServices): StepResult {
  if (!(err instanceof UpstreamError)) throw err;
  const { options } = server;
  options.logger.warn('upstream sign-in refused', { code: err.code, detail: err.detail ?? err.message });
  options.securityEvent('login.failed', {
    address: options.clientAddress(ctx),
    reason: `upstream_${err.code}`,
  });
  return pages.error(ctx, err.code === 'temporarily_unavailable' ? 502 : 400, err.code, err.message);
}
