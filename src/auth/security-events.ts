/**
 * Security events of the authorization server: one log line each, one shape for all —
 * `{…,"event":"security","type":"login.failed","address":"…","client_id":"…",…}` — so an operator can
 * alert on them and count them. A line never carries a secret: no password, token, code, client secret or
 * registration access token (not even a prefix); a user name only when it names a known account (a wrong one may
 * be a password typed into the wrong field); every text a client chose is cut to a short length.
 */

import { processLogger } from '../log.js';

/** Every event type, with what it means; docs/security.md's list comes from here. */
export const SECURITY_EVENTS = {
  'login.succeeded': 'a user signed in (password or upstream provider)',
  'login.failed':
    'a sign-in with an unknown user name, a wrong password, or refused by the upstream provider',
  'login.locked':
    'a failed sign-in brought a per-account or per-address counter to its limit: sign-ins are refused until the window ends',
  'client_auth.failed': 'client authentication at the token, revocation or introspection endpoint failed',
  'client.registered': 'a client was registered (RFC 7591)',
  'client.updated': 'a client changed its registration (RFC 7592 PUT)',
  'client.deleted': 'a client deleted its registration (RFC 7592 DELETE); its tokens stop working',
  'client_document.refused':
    'a client_id URL could not be used: its metadata document was refused (`reason`: address_refused, redirect, too_large, timeout, client_id_mismatch, …)',
  'authorization_code.replayed':
    'an authorization code was redeemed twice; every token of its grant was revoked',
  'refresh_token.reused': 'a used refresh token was presented again; every token of its grant was revoked',
  'rate_limit.refused': 'an abuse limit refused a request (429); `limit` names which',
} as const;

export type SecurityEventType = keyof typeof SECURITY_EVENTS;

/** Which abuse limit refused a request (`rate_limit.refused`). */
export type AbuseLimit = 'login.account' | 'login.address' | 'client_auth' | 'registration' | 'authorization';

/** The fields an event may carry, beside `event`, `type` and `time`. None of them is a secret. */
export interface SecurityEventFields {
  /** The client's address as the service determined it (see AuthServerOptions.clientAddress). */
  address?: string;
  client_id?: string;
  /** A configured user or an upstream subject; never a user name that names no account. */
  username?: string;
  /** Why it failed, as a short code (`unknown_user`, `wrong_password`, `wrong_secret`, …). */
  reason?: string;
  limit?: AbuseLimit;
  /** Seconds until a locked or limited caller may try again. */
  retry_after?: number;
  auth_method?: string;
}

/** Where event lines go: a function given the whole event object. */
export type SecurityLog = (event: Readonly<Record<string, unknown>>) => void;

/**
 * The default sink: a line of the process's log, beside the service's other lines (so it carries the request's
 * ids too): `{"level":"info","time":"…","requestId":"…","event":"security","type":"login.failed",…,"message":"security
 * login.failed"}`. The logger writes the time.
 */
export const processSecurityLog: SecurityLog = (event) => {
  const { time: _written, ...fields } = event;
  processLogger.info(`security ${String(event.type)}`, fields);
};

const MAX_TEXT = 128;

export function securityEvent(
  type: SecurityEventType,
  fields: SecurityEventFields,
  now: Date = new Date(),
): Record<string, unknown> {
  const event: Record<string, unknown> = { event: 'security', type, time: now.toISOString() };
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    event[name] =
      typeof value === 'string' && value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
  }
  return event;
}
