import { decodeJwt } from 'jose';
import { IdentityError } from './errors.js';
import { type IssuedToken, UNKNOWN_LIFETIME_MS } from './token-source.js';

const TIMEOUT_MS = 10_000;
/** A token response is small; anything bigger is not one. */
const MAX_RESPONSE_BYTES = 256 * 1024;

export interface EndpointCall {
  readonly label: string;
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers?: Record<string, string>;
  readonly form?: URLSearchParams;
}

/**
 * Calls a token endpoint and reads its answer: an OAuth 2.0 token response (`access_token`, `expires_in`) or the
 * managed identity shape (`expires_on` in epoch seconds, numbers as strings). Errors say the endpoint, its status and
 * OAuth error code and description — never the request's credentials nor a token.
 */
export async function callTokenEndpoint(
  call: EndpointCall,
  now: number,
): Promise<IssuedToken & { refreshToken?: string }> {
  let response: Response;
  try {
    response = await fetch(call.url, {
      method: call.method,
      headers: {
        accept: 'application/json',
        ...(call.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        ...call.headers,
      },
      ...(call.form ? { body: call.form.toString() } : {}),
      signal: AbortSignal.timeout(TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    throw new IdentityError(
      'endpoint-unreachable',
      `${call.label}: ${endpointOf(call.url)} cannot be reached (${cause})`,
    );
  }
  const text = await response.text();
  if (text.length > MAX_RESPONSE_BYTES)
    throw new IdentityError(
      'bad-response',
      `${call.label}: ${endpointOf(call.url)} answered more than a token response`,
    );
  let body: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      body = parsed as Record<string, unknown>;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const code = typeof body?.error === 'string' ? ` ${body.error}` : '';
    const description =
      typeof body?.error_description === 'string' ? `: ${body.error_description.slice(0, 300)}` : '';
    throw new IdentityError(
      'endpoint-refused',
      `${call.label}: ${endpointOf(call.url)} answered ${response.status}${code}${description}`,
    );
  }
  const token = body?.access_token;
  if (typeof token !== 'string' || token === '')
    throw new IdentityError(
      'bad-response',
      `${call.label}: ${endpointOf(call.url)} answered no access_token`,
    );
  const refreshToken = body?.refresh_token;
  return {
    token,
    expiresAt: expiryOf(body!, token, now),
    ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {}),
  };
}

/** The endpoint without its query: enough to say which one failed, nothing a query might carry. */
function endpointOf(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

function expiryOf(body: Record<string, unknown>, token: string, now: number): number {
  const seconds = (value: unknown) => {
    const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
    return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : undefined;
  };
  const expiresOn = seconds(body.expires_on);
  if (expiresOn !== undefined) return expiresOn * 1000;
  const expiresIn = seconds(body.expires_in);
  if (expiresIn !== undefined) return now + expiresIn * 1000;
  try {
    const exp = decodeJwt(token).exp;
    if (typeof exp === 'number') return exp * 1000;
  } catch {
    // an opaque token: its lifetime is unknown
  }
  return now + UNKNOWN_LIFETIME_MS;
}

/** The form parameters a policy's resource becomes, per the source's `resourceAs`. */
export function resourceParameters(
  resource: string,
  resourceAs: 'resource' | 'scope' | 'audience' | 'entra-scope',
  scopes: readonly string[],
): [string, string][] {
  const scope = [...scopes];
  const out: [string, string][] = [];
  switch (resourceAs) {
    case 'resource':
      out.push(['resource', resource]);
      break;
    case 'audience':
      out.push(['audience', resource]);
      break;
    case 'scope':
      scope.unshift(resource);
      break;
    case 'entra-scope':
      // Entra ID v2 asks for a resource's statically granted permissions as `{resource}/.default` (a resource that
      // ends in "/" gets only `.default`, as the Azure SDKs do).
      scope.unshift(resource.endsWith('/') ? `${resource}.default` : `${resource}/.default`);
      break;
  }
  if (scope.length > 0) out.push(['scope', scope.join(' ')]);
  return out;
}
