/**
 * The authorization server alone, the real one (in-process, on a free loopback port), and the client's side of its
 * flows: discovery, registration, the login and consent pages, tokens. For the authorization server's own tests and
 * for what talks to it (token sources, the fuzzed service).
 */
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import * as oauth from 'oauth4webapi';
import {
  type AuthorizationServer,
  type AuthServerOptions,
  createAuthorizationServer,
  hashPassword,
} from '../../src/auth/index.js';
import { insecure } from '../doubles/oauth-client.js';

export const USER = { username: 'alice', password: 'correct horse battery staple', name: 'Alice Example' };
const passwordHash = hashPassword(USER.password);

export { insecure };

export interface TestServer {
  url: string;
  issuer: string;
  resource: string;
  as: AuthorizationServer;
  /** Moves the injected clock forward. */
  advance(seconds: number): void;
  close(): Promise<void>;
}

/** Starts a Koa app with only the AS middleware on a free loopback port. */
export async function startServer(
  overrides: Partial<AuthServerOptions> = {},
  /** Where the issuer lives relative to the base URL: under a path (`/tenant1`) and/or on another host name. */
  layout: { issuerPath?: string; issuerHost?: string } = {},
): Promise<TestServer> {
  const app = new Koa();
  let offset = 0;
  let as: AuthorizationServer | undefined;
  app.use(async (ctx, next) => (as ? as.middleware(ctx, next) : next()));
  const http = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', () => resolve()));
  const port = (http.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  const issuer = `http://${layout.issuerHost ?? '127.0.0.1'}:${port}${layout.issuerPath ?? ''}`;
  as = await createAuthorizationServer({
    issuer,
    baseUrl: url,
    products: ['courses', 'grades'],
    users: [{ username: USER.username, passwordHash: await passwordHash, name: USER.name }],
    clock: () => Math.floor(Date.now() / 1000) + offset,
    // Security events are asserted through the real service (test/e2e/auth-abuse.test.ts); quiet here.
    securityLog: () => {},
    ...overrides,
  });
  return {
    url,
    issuer: overrides.issuer ?? issuer,
    resource: `${overrides.baseUrl ?? url}/v1/mcp`,
    as,
    advance(seconds) {
      offset += seconds;
    },
    async close() {
      await as?.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** A minimal browser: a cookie jar and manual redirects, enough to drive the login and consent pages. */
export class Browser {
  readonly cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0)
      headers.set('Cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return response;
  }

  /** Posts the first form of an HTML page with its hidden fields plus `fields`. */
  async submit(
    html: string,
    fields: Record<string, string>,
    init: { origin?: string } = {},
  ): Promise<Response> {
    const form = parseForm(html);
    const body = new URLSearchParams({ ...form.fields, ...fields });
    return this.fetch(form.action, {
      method: 'POST',
      body,
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        ...(init.origin ? { Origin: init.origin } : {}),
      },
    });
  }
}

export function parseForm(html: string): { action: string; fields: Record<string, string> } {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  if (!action) throw new Error(`no form in page:\n${html}`);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = m[2]!;
  return { action: action.replace(/&amp;/g, '&'), fields };
}

export function errorCodeOf(html: string): string | undefined {
  return /<code id="error">([^<]*)<\/code>/.exec(html)?.[1];
}

export async function discover(server: TestServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(server.issuer);
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
}

export interface RegisteredClient {
  client: oauth.Client;
  secret?: string;
  auth: oauth.ClientAuth;
  redirectUri: string;
  registration: Record<string, unknown>;
}

export async function register(
  as: oauth.AuthorizationServer,
  method: 'none' | 'client_secret_basic' | 'client_secret_post',
  extra: Record<string, unknown> = {},
): Promise<RegisteredClient> {
  const redirectUri = (extra.redirect_uris as string[] | undefined)?.[0] ?? 'http://127.0.0.1:43210/callback';
  const response = await oauth.dynamicClientRegistrationRequest(
    as,
    {
      client_name: `test ${method}`,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: method,
      ...extra,
    },
    insecure,
  );
  const registration = (await oauth.processDynamicClientRegistrationResponse(response)) as Record<
    string,
    unknown
  >;
  const client: oauth.Client = {
    client_id: registration.client_id as string,
    token_endpoint_auth_method: method,
  };
  const secret = registration.client_secret as string | undefined;
  const auth =
    method === 'none'
      ? oauth.None()
      : method === 'client_secret_basic'
        ? oauth.ClientSecretBasic(secret!)
        : oauth.ClientSecretPost(secret!);
  return { client, ...(secret ? { secret } : {}), auth, redirectUri, registration };
}

export interface AuthorizeResult {
  /** The final response (a redirect to the client, or a page). */
  response: Response;
  location?: URL;
  verifier: string;
  state: string;
}

/**
 * Runs /authorize → login page → consent page → redirect like a user would. `params` override or remove
 * (value undefined) the standard parameters.
 */
export async function authorize(
  server: TestServer,
  registered: { client: oauth.Client; redirectUri: string },
  params: Record<string, string | undefined> = {},
  options: { browser?: Browser; decision?: 'allow' | 'deny'; password?: string } = {},
): Promise<AuthorizeResult> {
  const browser = options.browser ?? new Browser();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const query: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: registered.client.client_id,
    redirect_uri: registered.redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: 'read:courses-work write:courses-work',
    state,
    resource: server.resource,
    ...params,
  };
  const url = new URL(`${server.url}/v1/authorize`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
  let response = await browser.fetch(url.href);
  for (let step = 0; step < 5 && response.status !== 303 && response.status !== 302; step++) {
    if (response.status !== 200) break;
    const html = await response.text();
    if (html.includes('name="password"')) {
      response = await browser.submit(html, {
        username: USER.username,
        password: options.password ?? USER.password,
      });
    } else if (html.includes('name="decision"')) {
      response = await browser.submit(html, { decision: options.decision ?? 'allow' });
    } else break;
    // follow the post-login 303 to our own consent page
    const next = response.headers.get('location');
    if ((response.status === 303 || response.status === 302) && next && new URL(next).origin === server.url) {
      response = await browser.fetch(next);
    }
  }
  const location = response.headers.get('location');
  return { response, ...(location ? { location: new URL(location) } : {}), verifier, state };
}

/** Authorize and exchange the code with oauth4webapi. */
export async function obtainTokens(
  server: TestServer,
  as: oauth.AuthorizationServer,
  registered: RegisteredClient,
  params: Record<string, string | undefined> = {},
) {
  const result = await authorize(server, registered, params);
  if (!result.location) throw new Error(`authorize did not redirect: ${result.response.status}`);
  const callback = oauth.validateAuthResponse(as, registered.client, result.location, result.state);
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    registered.client,
    registered.auth,
    callback,
    registered.redirectUri,
    result.verifier,
    { ...insecure, additionalParameters: { resource: server.resource } },
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, registered.client, response);
  return { tokens, code: callback.get('code')!, verifier: result.verifier };
}

/** POSTs a raw form to a URL and returns status, headers and parsed JSON (if any). */
export async function postForm(
  url: string,
  form: Record<string, string> | string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  const text = await response.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, json, text };
}

export function basic(id: string, secret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}
