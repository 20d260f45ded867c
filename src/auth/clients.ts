import { OAuthError } from './errors.js';
import { GRANTS } from './grants/index.js';
import type { ClientMetadata, ClientRecord, GrantType, TokenEndpointAuthMethod } from './stores/types.js';

const AUTH_METHODS: readonly TokenEndpointAuthMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'none',
];
/** A client may register the grant types the token endpoint serves. */
const GRANT_TYPES: readonly GrantType[] = [...GRANTS.keys()];
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_TEXT_LENGTH = 200;

/**
 * Loopback redirect URIs as raw strings. Matching works on the raw text, never on a parsed-and-reserialised
 * URL, so `/cb/../cb` or `%63b` can never be normalised into a registered value (OAuth 2.1 §2.3.1: simple
 * string comparison). Only `http` on 127.0.0.1, [::1] or localhost qualifies; the host itself must still match.
 */
const LOOPBACK_URI = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::(\d{1,5}))?([/?][^#]*)?$/;

/** RFC 8252 §7.3: for an http loopback redirect the port may differ; scheme, host, path and query may not. */
export function redirectUriMatches(registered: string, requested: string): boolean {
  if (registered === requested) return true;
  const a = LOOPBACK_URI.exec(registered);
  const b = LOOPBACK_URI.exec(requested);
  if (!a || !b) return false;
  if (b[2] !== undefined && (Number(b[2]) < 1 || Number(b[2]) > 65535)) return false;
  return a[1] === b[1] && (a[3] ?? '/') === (b[3] ?? '/');
}

/** Picks the redirect target of an authorization request; undefined means "show an error page, never redirect". */
export function resolveRedirectUri(client: ClientRecord, requested: string | undefined): string | undefined {
  const registered = client.metadata.redirect_uris;
  if (requested === undefined) return registered.length === 1 ? registered[0] : undefined;
  return registered.some((r) => redirectUriMatches(r, requested)) ? requested : undefined;
}

function checkRedirectUri(value: unknown, index: number): string {
  const where = `redirect_uris[${index}]`;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URI_LENGTH) {
    throw new OAuthError(
      'invalid_redirect_uri',
      `${where} must be a URI string of at most ${MAX_URI_LENGTH} characters`,
    );
  }
  if (value.includes('#'))
    throw new OAuthError('invalid_redirect_uri', `${where} must not contain a fragment`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('invalid_redirect_uri', `${where} is not an absolute URI: "${value}"`);
  }
  if (url.username || url.password) {
    throw new OAuthError('invalid_redirect_uri', `${where} must not contain user information`);
  }
  if (url.protocol === 'https:') return value;
  if (url.protocol === 'http:' && LOOPBACK_URI.test(value)) return value;
  throw new OAuthError(
    'invalid_redirect_uri',
    `${where} must use https, or http on 127.0.0.1, [::1] or localhost; got "${value}"`,
  );
}

function optionalText(body: Record<string, unknown>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.length > MAX_TEXT_LENGTH) {
    throw new OAuthError(
      'invalid_client_metadata',
      `${name} must be a string of at most ${MAX_TEXT_LENGTH} characters`,
    );
  }
  return value;
}

function optionalHttpsUri(body: Record<string, unknown>, name: string): string | undefined {
  const value =
    optionalText(body, name) ?? (typeof body[name] === 'string' ? (body[name] as string) : undefined);
  if (value === undefined) return undefined;
  try {
    if (new URL(value).protocol === 'https:') return value;
  } catch {}
  throw new OAuthError('invalid_client_metadata', `${name} must be an https URI`);
}

function stringArray(body: Record<string, unknown>, name: string): string[] | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw new OAuthError('invalid_client_metadata', `${name} must be an array of strings`);
  }
  return value as string[];
}

/**
 * Validates an RFC 7591 registration (or RFC 7592 update) body. Unknown fields are ignored and not echoed
 * (RFC 7591 §2); known fields with unsupported values are refused rather than silently changed.
 */
export function validateClientMetadata(
  body: Record<string, unknown>,
  supportedScopes: readonly string[],
): ClientMetadata {
  const redirectUris = body.redirect_uris;
  if (!Array.isArray(redirectUris) || redirectUris.length === 0) {
    throw new OAuthError('invalid_redirect_uri', 'redirect_uris must be a non-empty array');
  }
  if (redirectUris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError(
      'invalid_redirect_uri',
      `at most ${MAX_REDIRECT_URIS} redirect_uris may be registered`,
    );
  }
  const redirect_uris = [...new Set(redirectUris.map(checkRedirectUri))];

  // RFC 7591 §2: the default method is client_secret_basic.
  const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
  if (!AUTH_METHODS.includes(method as TokenEndpointAuthMethod)) {
    throw new OAuthError(
      'invalid_client_metadata',
      `token_endpoint_auth_method must be one of ${AUTH_METHODS.join(', ')}, got ${JSON.stringify(method)}`,
    );
  }

  const grantTypes = stringArray(body, 'grant_types') ?? ['authorization_code'];
  for (const g of grantTypes) {
    if (!GRANT_TYPES.includes(g as GrantType)) {
      throw new OAuthError(
        'invalid_client_metadata',
        `grant_types must only contain ${GRANT_TYPES.join(', ')}, got "${g}"`,
      );
    }
  }
  if (!grantTypes.includes('authorization_code')) {
    throw new OAuthError('invalid_client_metadata', 'grant_types must include authorization_code');
  }
  const responseTypes = stringArray(body, 'response_types') ?? ['code'];
  if (responseTypes.length !== 1 || responseTypes[0] !== 'code') {
    throw new OAuthError('invalid_client_metadata', 'response_types must be ["code"]');
  }

  const applicationType = body.application_type ?? 'web';
  if (applicationType !== 'web' && applicationType !== 'native') {
    throw new OAuthError('invalid_client_metadata', 'application_type must be "web" or "native"');
  }

  const scope = optionalText(body, 'scope');
  if (scope !== undefined) {
    const unknown = scope.split(' ').filter((s) => s !== '' && !supportedScopes.includes(s));
    if (unknown.length > 0)
      throw new OAuthError('invalid_client_metadata', `scope contains unknown scopes: ${unknown.join(' ')}`);
  }
  const contacts = stringArray(body, 'contacts');
  if (contacts && (contacts.length > 5 || contacts.some((c) => c.length > MAX_TEXT_LENGTH))) {
    throw new OAuthError('invalid_client_metadata', 'contacts must list at most 5 short strings');
  }

  const metadata: ClientMetadata = {
    redirect_uris,
    token_endpoint_auth_method: method as TokenEndpointAuthMethod,
    grant_types: [...new Set(grantTypes)] as GrantType[],
    response_types: ['code'],
    application_type: applicationType,
  };
  const optional = {
    client_name: optionalText(body, 'client_name'),
    client_uri: optionalHttpsUri(body, 'client_uri'),
    logo_uri: optionalHttpsUri(body, 'logo_uri'),
    scope,
    contacts,
    software_id: optionalText(body, 'software_id'),
    software_version: optionalText(body, 'software_version'),
  };
  for (const [key, value] of Object.entries(optional)) {
    if (value !== undefined) (metadata as unknown as Record<string, unknown>)[key] = value;
  }
  return metadata;
}
