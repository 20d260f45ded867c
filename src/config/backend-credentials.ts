/**
 * The backend entities as the engine uses them: each credential value with its `{{named-value}}` references
 * resolved (API Management's way to keep a backend's key in a named value, or Key Vault behind one), and the
 * resolved values marked secret, so the engine never logs them.
 */
import type { NamedValues } from '../policy/index.js';
import type { BackendConfig } from './backend-schema.js';

/** A backend entity whose credential values are resolved. */
export type ResolvedBackend = BackendConfig & {
  /** Every credential value sent to this backend (header, query, authorization parameter): never logged. */
  readonly secretValues: readonly string[];
};

const namedValueReference = /\{\{([A-Za-z0-9._-]+)\}\}/g;

/** Single backends by id → URL: what `set-backend-service backend-id` and Envoy's clusters name. */
export function singleBackendUrls(backends: readonly BackendConfig[]): ReadonlyMap<string, string> {
  return new Map(
    backends.flatMap((backend) =>
      backend.type !== 'pool' && backend.url !== undefined ? [[backend.id, backend.url] as const] : [],
    ),
  );
}

/** Resolves each credential value's named values; an unknown name is a problem at the value's key path. */
export function resolveBackendCredentials(
  backends: readonly BackendConfig[],
  namedValues: NamedValues,
  problem: (keys: (string | number)[], message: string) => void,
): ResolvedBackend[] {
  return backends.map((backend, index) => {
    const credentials = backend.credentials;
    if (credentials === undefined) return { ...backend, secretValues: [] };
    const secretValues: string[] = [];
    const resolve = (value: string, keys: (string | number)[]): string => {
      const resolved = value.replace(namedValueReference, (_, name: string) => {
        const entry = namedValues.get(name);
        if (entry === undefined) {
          problem(['backends', index, 'credentials', ...keys], `no named value "${name}" in namedValues`);
          return '';
        }
        return entry.value;
      });
      secretValues.push(resolved);
      return resolved;
    };
    const values = (section: 'header' | 'query') =>
      credentials[section] &&
      Object.fromEntries(
        Object.entries(credentials[section]).map(([name, list]) => [
          name,
          list.map((value, position) => resolve(value, [section, name, position])),
        ]),
      );
    const header = values('header');
    const query = values('query');
    const authorization = credentials.authorization && {
      scheme: credentials.authorization.scheme,
      parameter: resolve(credentials.authorization.parameter, ['authorization', 'parameter']),
    };
    return {
      ...backend,
      credentials: {
        ...credentials,
        ...(header ? { header } : {}),
        ...(query ? { query } : {}),
        ...(authorization ? { authorization } : {}),
      },
      secretValues: secretValues.filter((value) => value.length > 0),
    };
  });
}
