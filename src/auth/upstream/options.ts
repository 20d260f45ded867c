import { isLoopbackHost } from '../loopback.js';

/** An upstream OpenID Connect provider users may sign in with instead of a configured password. */
export interface UpstreamProviderOptions {
  /** Prefix of the local subject (`<id>|<upstream sub>`); letters, digits, ".", "_", "-". Default `oidc`. */
  id?: string;
  /** Shown on the login page as "Sign in with <name>". Default: the issuer's host. */
  name?: string;
  /** The provider's issuer identifier; its metadata is discovered at `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Default `["openid"]`; `openid` is always requested. */
  scopes?: string[];
  /** Per upstream HTTP call. Default 10000. */
  timeoutMs?: number;
}

export interface ResolvedUpstream {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string[];
  timeoutMs: number;
  /** http on a loopback host: development and tests only. */
  insecure: boolean;
}

const ID = /^[A-Za-z0-9._-]{1,32}$/;
const KNOWN = new Set(['id', 'name', 'issuer', 'clientId', 'clientSecret', 'scopes', 'timeoutMs']);

function fail(path: string, message: string): never {
  throw new TypeError(`auth options: identityProvider.${path} ${message}`);
}

export function resolveUpstream(input: UpstreamProviderOptions): ResolvedUpstream {
  for (const key of Object.keys(input)) if (!KNOWN.has(key)) fail(key, 'is not a known option');
  let url: URL;
  try {
    url = new URL(input.issuer);
  } catch {
    fail('issuer', `must be an absolute URL, got ${JSON.stringify(input.issuer)}`);
  }
  const insecure = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !insecure)
    fail('issuer', `must use https (http is allowed only on a loopback host), got "${input.issuer}"`);
  if (url.search || url.hash) fail('issuer', `must not have a query or fragment, got "${input.issuer}"`);
  const id = input.id ?? 'oidc';
  if (!ID.test(id)) fail('id', `must be 1-32 letters, digits, ".", "_" or "-", got ${JSON.stringify(id)}`);
  if (typeof input.clientId !== 'string' || input.clientId === '')
    fail('clientId', 'must be a non-empty string');
  if (typeof input.clientSecret !== 'string' || input.clientSecret === '')
    fail('clientSecret', 'must be a non-empty string');
  const scopes = input.scopes ?? ['openid'];
  if (
    !Array.isArray(scopes) ||
    scopes.some((s) => typeof s !== 'string' || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(s))
  )
    fail('scopes', 'must be an array of scope tokens');
  const timeoutMs = input.timeoutMs ?? 10_000;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) fail('timeoutMs', 'must be a positive integer');
  return {
    id,
    name: input.name ?? url.host,
    issuer: input.issuer,
    clientId: input.clientId,
    clientSecret: input.clientSecret,
    scopes: ['openid', ...new Set(scopes.filter((s) => s !== 'openid'))],
    timeoutMs,
    insecure,
  };
}

/** The local subject of an upstream user. resolveOptions() refuses configured user names with this prefix. */
export function upstreamSubject(upstream: ResolvedUpstream, sub: string): string {
  return `${upstream.id}|${sub}`;
}
