import type { Context } from 'koa';
import { digest, randomToken } from '../crypto.js';
import type { InteractionRecord, SessionRecord } from '../stores/types.js';
import { established, type FlowServices, type Step, type StepResult } from './steps.js';

/**
 * The end of the flow: a grant for what the user consented to, a one-time code bound to the request's redirect
 * URI and PKCE challenge (stored as its digest), the interaction closed, and the code redirected to the client.
 */
export async function issueCode(
  ctx: Context,
  interaction: InteractionRecord,
  session: SessionRecord,
  { server, pages }: FlowServices,
): Promise<StepResult> {
  const { options, stores } = server;
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
  return pages.redirect(ctx, interaction.redirectTarget, { code, state: interaction.state });
}

export const issueCodeStep: Step = {
  name: 'issue the code',
  run: (ctx, flow, services) =>
    issueCode(ctx, established(flow, 'interaction'), established(flow, 'session'), services),
};
