import type { Context } from 'koa';
import { parseQuery } from '../body.js';
import { isUrlClientId } from '../client-documents/client-id.js';
import { isKnownSubject } from '../options.js';
import { consentPage, describeScope } from '../pages.js';
import type { InteractionRecord, SessionRecord } from '../stores/types.js';
import { issueCode } from './issue.js';
import { established, type FlowServices, type Step, type StepResult } from './steps.js';

/**
 * Consent: what a user allowed a client (scopes and resources, kept until the refresh token lifetime), asked for on
 * a page after sign-in unless already remembered.
 */

function consentKey(sub: string, clientId: string): string {
  return `${sub}\n${clientId}`;
}

async function consentRemembered(
  { server }: FlowServices,
  sub: string,
  interaction: InteractionRecord,
): Promise<boolean> {
  const consent = await server.stores.consents.get(consentKey(sub, interaction.clientId));
  return (
    consent !== undefined &&
    interaction.scope.every((s) => consent.scope.includes(s)) &&
    consent.resources.includes(interaction.resource)
  );
}

async function showConsent(
  ctx: Context,
  interaction: InteractionRecord,
  session: SessionRecord,
  { server, pages }: FlowServices,
): Promise<StepResult> {
  const { options } = server;
  const user = options.users.get(session.sub!);
  const client = await server.clients.get(interaction.clientId);
  return pages.render(
    ctx,
    200,
    consentPage({
      action: options.endpoints.consent,
      interaction: interaction.id,
      csrf: interaction.csrf,
      clientName: client?.metadata.client_name ?? `client ${interaction.clientId}`,
      // A client metadata document's name is the client's own claim; the host serving it is what vouches for it.
      ...(isUrlClientId(interaction.clientId) ? { clientHost: new URL(interaction.clientId).host } : {}),
      redirectHost: new URL(interaction.redirectTarget).host,
      userName: user?.name ?? session.name ?? session.sub!,
      scopes: interaction.scope.map((name) => ({ name, description: describeScope(name) })),
      resource: interaction.resource,
    }),
  );
}

/** After sign-in (or with an existing session): deliver a pending error, skip a remembered consent, or ask. */
export const continueAfterSignIn: Step = {
  name: 'continue after sign-in',
  async run(ctx, flow, services) {
    const { server, pages } = services;
    const interaction = established(flow, 'interaction');
    const session = established(flow, 'session');
    if (interaction.pendingError) {
      await server.stores.interactions.delete(interaction.id);
      return pages.redirectError(ctx, interaction, interaction.pendingError);
    }
    if (await consentRemembered(services, session.sub!, interaction))
      return issueCode(ctx, interaction, session, services);
    // After a form post, the consent page is a page of its own (303), so reloading it posts nothing again.
    if (ctx.method === 'POST')
      return pages.seeOther(
        ctx,
        `${server.options.endpoints.consent}?interaction=${encodeURIComponent(interaction.id)}`,
      );
    return showConsent(ctx, interaction, session, services);
  },
};

/**
 * GET /authorize for a browser already signed in: a phase 2 error is redirected at once (nothing stored),
 * otherwise the request is stored and continues as after sign-in.
 */
export const resumeSignedInSession: Step = {
  name: 'resume a signed-in session',
  async run(ctx, flow, services) {
    const { server, pages } = services;
    const session = established(flow, 'session');
    if (session.sub === undefined || !isKnownSubject(server.options, session.sub)) return 'next';
    const interaction = established(flow, 'interaction');
    if (interaction.pendingError) return pages.redirectError(ctx, interaction, interaction.pendingError);
    await server.stores.interactions.set(interaction.id, interaction, interaction.expiresAt);
    return continueAfterSignIn.run(ctx, flow, services);
  },
};

/** GET {base_url}/v1/authorize/consent?interaction=… (the page after sign-in) */
export const findSignedInInteraction: Step = {
  name: 'find the signed-in interaction',
  async run(ctx, flow, { server, pages, sessions }) {
    const session = await sessions.load(ctx);
    let id: string | undefined;
    try {
      id = parseQuery(ctx.querystring).get('interaction');
    } catch {}
    const interaction = id === undefined ? undefined : await server.stores.interactions.get(id);
    if (!session?.sub || !interaction || interaction.upstream || interaction.sessionId !== session.id) {
      return pages.error(
        ctx,
        403,
        'access_denied',
        'this authorization request has expired; start again from the application',
      );
    }
    flow.session = session;
    flow.interaction = interaction;
    return 'next';
  },
};

export const showConsentPage: Step = {
  name: 'show the consent page',
  run: (ctx, flow, services) =>
    showConsent(ctx, established(flow, 'interaction'), established(flow, 'session'), services),
};

/** POST {base_url}/v1/authorize/consent, after the form checks. */
export const requireSignIn: Step = {
  name: 'require a signed-in user',
  async run(ctx, flow, { server, pages }) {
    const { sub } = established(flow, 'session');
    if (sub === undefined || !isKnownSubject(server.options, sub))
      return pages.error(ctx, 403, 'access_denied', 'sign in first');
    return 'next';
  },
};

export const readDecision: Step = {
  name: 'read the decision',
  async run(ctx, flow, { server, pages }) {
    const decision = established(flow, 'form').get('decision');
    if (decision === 'deny') {
      const interaction = established(flow, 'interaction');
      await server.stores.interactions.delete(interaction.id);
      return pages.redirectError(ctx, interaction, {
        code: 'access_denied',
        description: 'the user denied the request',
      });
    }
    if (decision !== 'allow')
      return pages.error(ctx, 400, 'invalid_request', 'decision must be allow or deny');
    return 'next';
  },
};

export const rememberConsent: Step = {
  name: 'remember the consent',
  async run(_ctx, flow, { server }) {
    const { options, stores } = server;
    const interaction = established(flow, 'interaction');
    const key = consentKey(established(flow, 'session').sub!, interaction.clientId);
    const previous = await stores.consents.get(key);
    await stores.consents.set(
      key,
      {
        scope: [...new Set([...(previous?.scope ?? []), ...interaction.scope])],
        resources: [...new Set([...(previous?.resources ?? []), interaction.resource])],
      },
      options.clock() + options.refreshTokenTtl,
    );
    return 'next';
  },
};
