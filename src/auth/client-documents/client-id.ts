/**
 * Whether a client_id names a client metadata document rather than a registration: it looks like an absolute URL.
 * Registered client ids are random base64url text and never contain `:`. A file of its own: the token checks need
 * it without the document's validation (which reaches the grants registry through the client metadata rules).
 */
export function isUrlClientId(clientId: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(clientId);
}
