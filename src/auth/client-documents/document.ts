import { validateClientMetadata } from '../clients.js';
import { OAuthError } from '../errors.js';
import type { ClientRecord } from '../stores/types.js';
import { ClientDocumentError } from './errors.js';

/** Longest client_id URL accepted (it is kept in every pending authorization request of the client). */
export const MAX_CLIENT_ID_URL_LENGTH = 2048;

const URL_PARTS = /^https:\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/;
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * The client identifier rules of draft-ietf-oauth-client-id-metadata-document §3: https, a path, no dot segments
 * (checked on the raw text: URL parsing would remove them), no fragment, no user information. A query is allowed.
 */
export function parseClientIdUrl(clientId: string): URL {
  const refuse = (message: string): never => {
    throw new ClientDocumentError('bad_url', clientId.slice(0, 200), message);
  };
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH)
    refuse(`a client_id URL must be at most ${MAX_CLIENT_ID_URL_LENGTH} characters`);
  const parts = URL_PARTS.exec(clientId);
  if (!parts) refuse('a client_id URL must use https');
  const [, authority, path, , fragment] = parts!;
  if (fragment !== undefined) refuse('a client_id URL must not have a fragment');
  if (authority!.includes('@')) refuse('a client_id URL must not contain user information');
  if (path === undefined || path === '/') refuse('a client_id URL must have a path');
  if (path!.split('/').some((segment) => DOT_SEGMENT.test(segment)))
    refuse('a client_id URL must not contain "." or ".." path segments');
  try {
    return new URL(clientId);
  } catch {
    return refuse('the client_id is not a valid URL');
  }
}

/** Token endpoint authentication methods that need a shared secret, which a public document cannot hold (§4.1). */
const SHARED_SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']);

/**
 * A fetched document as a client (§4): a JSON object whose `client_id` is the URL (simple string comparison), no
 * client secret, no shared-secret authentication, and RFC 7591 metadata that passes the same checks as a dynamic
 * registration. The document's `scope` is not used: one document serves many authorization servers, so it may
 * name scopes of others; what the client may ask for is what this server offers.
 */
export function clientFromDocument(
  clientId: string,
  text: string,
  supportedScopes: readonly string[],
  now: number,
): ClientRecord {
  const refuse = (reason: ConstructorParameters<typeof ClientDocumentError>[0], message: string): never => {
    throw new ClientDocumentError(reason, clientId, message);
  };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    refuse('not_json', 'the document is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    refuse('not_json', 'the document must be a JSON object');
  const document = body as Record<string, unknown>;
  if (document.client_id !== clientId) {
    refuse(
      'client_id_mismatch',
      `the document's client_id must equal its URL, got ${JSON.stringify(document.client_id)?.slice(0, 120)}`,
    );
  }
  for (const secret of ['client_secret', 'client_secret_expires_at']) {
    if (document[secret] !== undefined) refuse('client_secret', `the document must not contain ${secret}`);
  }
  // A public client unless it says otherwise: RFC 7591's default (client_secret_basic) cannot apply here.
  const method = document.token_endpoint_auth_method ?? 'none';
  if (typeof method === 'string' && SHARED_SECRET_METHODS.has(method))
    refuse('auth_method', `token_endpoint_auth_method must not use a shared secret, got "${method}"`);
  if (method !== 'none') {
    refuse(
      'auth_method',
      `token_endpoint_auth_method ${JSON.stringify(method)?.slice(0, 60)} is not supported here (supported: none)`,
    );
  }
  try {
    const metadata = validateClientMetadata(
      { ...document, token_endpoint_auth_method: 'none', scope: undefined },
      supportedScopes,
    );
    return { clientId, issuedAt: now, secretExpiresAt: 0, metadata };
  } catch (error) {
    if (error instanceof OAuthError) return refuse('invalid_metadata', error.message);
    throw error;
  }
}
