/**
 * The gateway's own credentials in a test case: the token sources of `identities` (authentication-managed-identity,
 * send-request's child of that name) and the credential manager (get-authorization-context), answered from the
 * case's `tokens` and `authorizations` stubs. Nothing is fetched: a credential the case did not stub fails as the
 * source would, with a message naming the case and the stub it lacks, and is listed so the case fails even when the
 * policy ignores the error.
 */
import { decodeJwt } from 'jose';
import type { GatewayConfig } from '../config/schema.js';
import type { AuthorizationContexts, IdentityTokens } from '../policy/index.js';
import type { AuthorizationStub, Stubs, TokenStub } from './test-file.js';

/** A credential a policy asked for that no stub gives: where the stub belongs, and what it should answer. */
export interface MissingStub {
  /** The key path of the stub, e.g. `stubs.tokens.default`. */
  readonly key: string;
  readonly wanted: string;
}

export interface StubbedIdentities {
  readonly identities: IdentityTokens;
  readonly authorizations: AuthorizationContexts;
  readonly missing: MissingStub[];
}

/** How long a stubbed token lives: the engine's cache is not in play, so any lifetime past the case will do. */
const STUB_LIFETIME_MS = 3600_000;

export function stubbedIdentities(options: {
  readonly stubs: Pick<Stubs, 'tokens' | 'authorizations'>;
  readonly config: GatewayConfig['identities'];
  readonly caseName: string;
  readonly now: () => number;
}): StubbedIdentities {
  const { stubs, caseName } = options;
  const missing: MissingStub[] = [];
  const identities: IdentityTokens = {
    async token({ resource, clientId }) {
      const names = identityNames(clientId, options.config);
      const stub = names
        .map((name) => stubs.tokens[name])
        .map((byResource) => byResource?.[resource] ?? byResource?.['*'])
        .find((found) => found !== undefined);
      if (stub === undefined) {
        const key = `stubs.tokens.${names[0]}`;
        missing.push({ key, wanted: `a token for resource "${resource}"` });
        throw new Error(
          `case "${caseName}": no stub for identity "${names[0]}"${clientId !== undefined && clientId !== names[0] ? ` (client-id "${clientId}")` : ''} and resource "${resource}" (${key}["${resource}"], or "*" for any resource)`,
        );
      }
      return { token: tokenOf(stub), expiresAt: options.now() + STUB_LIFETIME_MS };
    },
  };
  const authorizations: AuthorizationContexts = {
    async authorization({ providerId, authorizationId }) {
      const connections = stubs.authorizations[providerId];
      const stub = connections?.[authorizationId] ?? connections?.['*'];
      if (stub === undefined) {
        const key = `stubs.authorizations.${providerId}`;
        missing.push({ key, wanted: `connection "${authorizationId}"` });
        throw new Error(
          `case "${caseName}": no stub for connection "${authorizationId}" of provider "${providerId}" (${key}.${authorizationId})`,
        );
      }
      return authorizationOf(stub);
    },
  };
  return { identities, authorizations, missing };
}

/**
 * The names a token request's stub may be under, the one a missing stub is reported by first: with no client-id,
 * `default` and the configured default source; with a client-id, the source it selects (by name or by its clientId)
 * and the client-id itself — or, when it selects none, the client-id and then `default` (an azure-imds default acts
 * for any client-id).
 */
export function identityNames(clientId: string | undefined, config: GatewayConfig['identities']): string[] {
  const sources = config?.sources ?? {};
  const names = Object.keys(sources);
  if (clientId === undefined)
    return unique(['default', config?.default ?? (names.length === 1 ? names[0] : undefined)]);
  const selected = Object.hasOwn(sources, clientId)
    ? clientId
    : Object.entries(sources).find(([, source]) => source.clientId === clientId)?.[0];
  return selected === undefined ? unique([clientId, 'default']) : unique([selected, clientId]);
}

function unique(names: readonly (string | undefined)[]): string[] {
  return [...new Set(names.filter((name): name is string => name !== undefined))];
}

function tokenOf(stub: TokenStub): string {
  if (typeof stub === 'string') return stub;
  throw new Error(stub.fail);
}

function authorizationOf(stub: AuthorizationStub): {
  accessToken: string;
  claims: Readonly<Record<string, unknown>>;
} {
  if (typeof stub === 'string') return { accessToken: stub, claims: claimsOf(stub) };
  if ('fail' in stub) throw new Error(stub.fail);
  return { accessToken: stub.accessToken, claims: stub.claims ?? claimsOf(stub.accessToken) };
}

/** A JWT's claims, or none for an opaque token: what the credential manager gives. */
function claimsOf(token: string): Record<string, unknown> {
  try {
    return decodeJwt(token);
  } catch {
    return {};
  }
}
