/**
 * Signs a configured user in through the authorization server's own login and consent pages, as a browser would (a
 * cookie jar, manual redirects, form posts), and returns the redirect to the client: what a benchmark needs to hold
 * a real access token. The tests' user agent (test/doubles/stack-browser.ts) also drives upstream providers and
 * records every request; benchmarks import nothing of test/, so this is the part they need.
 */

import { createHash, randomBytes } from 'node:crypto';

function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_m, code: string) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
}

/** Follows the authorization URL through the login page and the consent page ("allow") to the client's callback. */
export async function signIn(
  authorizationUrl: string,
  user: { readonly username: string; readonly password: string },
): Promise<URL> {
  const origin = new URL(authorizationUrl).origin;
  const cookies = new Map<string, string>();
  async function open(url: string, form?: Record<string, string>): Promise<Response> {
    const headers = new Headers();
    if (cookies.size > 0) headers.set('cookie', [...cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    if (form) headers.set('content-type', 'application/x-www-form-urlencoded');
    if (form) headers.set('origin', origin);
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      headers,
      redirect: 'manual',
      ...(form ? { body: new URLSearchParams(form) } : {}),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }

  let current = authorizationUrl;
  let response = await open(current);
  for (let step = 0; step < 16; step++) {
    const location = response.headers.get('location');
    if (location) {
      const target = new URL(location, current);
      if (target.origin !== origin) return target;
      current = target.href;
      response = await open(current);
      continue;
    }
    const html = await response.text();
    if (response.status !== 200)
      throw new Error(`authorization page ${current} answered ${response.status}:\n${html}`);
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no form on the authorization page ${current}:\n${html}`);
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields[decodeEntities(m[1]!)] = decodeEntities(m[2]!);
    if (html.includes('name="password"'))
      Object.assign(fields, { username: user.username, password: user.password });
    else if (html.includes('name="decision"')) fields.decision = 'allow';
    else throw new Error(`unexpected authorization page ${current}:\n${html}`);
    current = new URL(decodeEntities(action), current).href;
    response = await open(current, fields);
  }
  throw new Error(`no redirect to the client after sixteen steps from ${authorizationUrl}`);
}

/**
 * An access token as a public client gets one: registration (RFC 7591), the authorization code with PKCE through
 * the login and consent pages (`signIn`), the code exchange; `resource` (RFC 8707) when given.
 */
export async function accessTokenFor(
  gateway: string,
  user: { readonly username: string; readonly password: string },
  options: { readonly redirectUri: string; readonly scope: string; readonly resource?: string },
): Promise<string> {
  const resource: Record<string, string> =
    options.resource === undefined ? {} : { resource: options.resource };
  const registration = (await (
    await fetch(`${gateway}/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [options.redirectUri], token_endpoint_auth_method: 'none' }),
    })
  ).json()) as { client_id: string };
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${gateway}/v1/authorize`);
  authorize.search = new URLSearchParams({
    response_type: 'code',
    client_id: registration.client_id,
    redirect_uri: options.redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    scope: options.scope,
    ...resource,
    state: 'bench',
  }).toString();
  const callback = await signIn(authorize.href, user);
  const token = (await (
    await fetch(`${gateway}/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        redirect_uri: options.redirectUri,
        client_id: registration.client_id,
        code_verifier: verifier,
        ...resource,
      }),
    })
  ).json()) as { access_token: string };
  return token.access_token;
}
