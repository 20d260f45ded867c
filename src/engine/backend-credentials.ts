/**
 * A backend entity's credentials (https://learn.microsoft.com/azure/api-management/backends, "Authorization
 * credentials"), added to the request as it leaves for that backend: its headers and query parameters, its
 * `Authorization` scheme and parameter, a token of the gateway's `identities` for its managed-identity resource. The
 * client certificate is Envoy's (the backend's cluster presents it). Policies never see them (they are added after
 * the backend section), and each value is one of the request's secrets, so no log line or trace shows it.
 */
import type { ResolvedBackend } from '../config/backend-credentials.js';
import type { ForwardedRequest, IdentityTokens, RequestSecrets } from '../policy/index.js';

/** The request with `backend`'s credentials; the same request when it has none. */
export async function withBackendCredentials(
  request: ForwardedRequest,
  backend: ResolvedBackend | undefined,
  identities: IdentityTokens | undefined,
  secrets: RequestSecrets,
): Promise<ForwardedRequest> {
  const credentials = backend?.credentials;
  if (credentials === undefined) return request;
  for (const value of backend!.secretValues) secrets.add(value);
  const headers = new Map<string, [string, string][]>();
  for (const [name, value] of request.headers) {
    const key = name.toLowerCase();
    headers.set(key, [...(headers.get(key) ?? []), [name, value]]);
  }
  // A credential header replaces what the request carried under its name: the backend's key is the gateway's.
  for (const [name, values] of Object.entries(credentials.header ?? {}))
    headers.set(
      name.toLowerCase(),
      values.map((value) => [name, value]),
    );
  if (credentials.authorization) {
    const { scheme, parameter } = credentials.authorization;
    headers.set('authorization', [['Authorization', `${scheme} ${parameter}`]]);
  }
  if (credentials.managedIdentity) {
    if (identities === undefined)
      throw new Error(
        `backend "${backend!.id}" needs a managed identity token, and no identities are configured`,
      );
    const { token } = await identities.token(credentials.managedIdentity);
    secrets.add(token);
    headers.set('authorization', [['Authorization', `Bearer ${token}`]]);
  }
  return {
    ...request,
    headers: [...headers.values()].flat(),
    pathAndQuery: withQuery(request.pathAndQuery, credentials.query ?? {}),
  };
}

/** The path with each credential query parameter set (replacing one the request carried by that name). */
function withQuery(pathAndQuery: string, query: Readonly<Record<string, readonly string[]>>): string {
  const names = Object.keys(query);
  if (names.length === 0) return pathAndQuery;
  const mark = pathAndQuery.indexOf('?');
  const path = mark === -1 ? pathAndQuery : pathAndQuery.slice(0, mark);
  const params = new URLSearchParams(mark === -1 ? '' : pathAndQuery.slice(mark + 1));
  for (const name of names) {
    params.delete(name);
    for (const value of query[name]!) params.append(name, value);
  }
  return `${path}?${params.toString()}`;
}
