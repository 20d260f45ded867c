/**
 * The one error catalog of the authorization server. Every refusal is an `OAuthError` whose `code` comes from
 * this table, so a `switch (err.code)` narrows cleanly and the HTTP status is decided in one place. Anything
 * thrown that is not an `OAuthError` is an internal fault and is shown to clients only as `server_error`.
 */

import { StateUnavailableError } from '../state/limits.js';
export const ERROR_CATALOG = {
  // RFC 6749 §5.2 / OAuth 2.1 token and authorization endpoint errors
  invalid_request: { status: 400, summary: 'the request is missing, repeats or malforms a parameter' },
  invalid_client: { status: 401, summary: 'client authentication failed' },
  invalid_grant: {
    status: 400,
    summary: 'the code or refresh token is invalid, expired, revoked or not yours',
  },
  unauthorized_client: {
    status: 400,
    summary: 'the client is not registered for this grant or response type',
  },
  unsupported_grant_type: { status: 400, summary: 'the grant_type is not supported' },
  unsupported_response_type: { status: 400, summary: 'the response_type is not supported' },
  invalid_scope: { status: 400, summary: 'the scope is unknown or exceeds what was granted' },
  access_denied: { status: 403, summary: 'the user or the server denied the request' },
  // RFC 8707
  invalid_target: { status: 400, summary: 'the resource is not one this server issues tokens for' },
  // RFC 7009
  unsupported_token_type: { status: 400, summary: 'this token type cannot be revoked' },
  // RFC 7591
  invalid_redirect_uri: { status: 400, summary: 'a redirect URI is not acceptable' },
  invalid_client_metadata: { status: 400, summary: 'a client metadata field is not acceptable' },
  // RFC 7592 / RFC 6750 (bearer tokens: registration access tokens and access tokens)
  invalid_token: { status: 401, summary: 'the bearer token is missing, invalid, expired or revoked' },
  insufficient_scope: { status: 403, summary: 'the token lacks a required scope' },
  // abuse limits: a distinct status so clients back off instead of retrying other credentials
  temporarily_unavailable: { status: 429, summary: 'too many attempts; retry later' },
  server_error: { status: 500, summary: 'internal error' },
} as const;

export type OAuthErrorCode = keyof typeof ERROR_CATALOG;

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;
  readonly status: number;
  /** Extra response headers, e.g. `WWW-Authenticate` or `Retry-After`. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: OAuthErrorCode,
    description: string,
    options?: { status?: number; headers?: Record<string, string> },
  ) {
    super(sanitizeDescription(description));
    this.name = 'OAuthError';
    this.code = code;
    this.status = options?.status ?? ERROR_CATALOG[code].status;
    this.headers = options?.headers ?? {};
  }

  /** The RFC 6749 §5.2 JSON body. */
  toJSON(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}

/**
 * Internal faults become a generic `server_error`; client errors keep their message. Shared state that cannot be
 * reached (Redis down) is a passing condition: 503 `temporarily_unavailable` with Retry-After, so clients retry.
 */
export function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  if (err instanceof StateUnavailableError) {
    return new OAuthError('temporarily_unavailable', 'the service is temporarily unavailable; retry later', {
      status: 503,
      headers: { 'Retry-After': '1' },
    });
  }
  return new OAuthError('server_error', 'internal error');
}

/** RFC 6749 §5.2 limits error_description to %x20-21 / %x23-5B / %x5D-7E (no `"`, no `\`, ASCII only). */
export function sanitizeDescription(text: string): string {
  return text.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, "'").slice(0, 300);
}
