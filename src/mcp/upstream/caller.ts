import type { MethodContext } from '../protocol/method.js';
import { sessionKey } from '../transport/session-store.js';
import type { UpstreamCaller } from './aggregator.js';

/**
 * Whose upstream sessions a request uses: its downstream session's, or in the stateless revision (no session) its
 * owner's, `sub` + `client_id`.
 */
export function upstreamCaller(ctx: Pick<MethodContext, 'session' | 'subject'>): UpstreamCaller {
  return {
    subject: ctx.subject,
    downstream: ctx.session
      ? sessionKey(ctx.session.id)
      : `owner:${ctx.subject.sub}\t${ctx.subject.clientId}`,
  };
}
