import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Browser,
  discover,
  errorCodeOf,
  insecure,
  parseForm,
  type RegisteredClient,
  register,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

/**
 * The upstream sign-in against a real OpenID Connect provider (node-oidc-provider with its development login
 * and consent pages) on a loopback port, driven over HTTP like a browser: our client → our /v1/authorize → the
 * provider → our callback → our consent → code → token for the upstream user.
 */

const UPSTREAM_CLIENT = { client_id: 'portcullis', client_secret: 'upstream-secret-0123456789abcdef' };

let upstreamHttp: Server;
let upstreamUrl: string;
let server: TestServer;
let as: oauth.AuthorizationServer;
let registered: RegisteredClient;

beforeAll(async () => {
  let handler: ((req: never, res: never) => void) | undefined;
  upstreamHttp = createServer((req, res) => handler!(req as never, res as never));
  await new Promise<void>((resolve) => upstreamHttp.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstreamHttp.address() as AddressInfo).port}`;

  server = await startServer({
    cookieSecure: false,
    identityProvider: {
      id: 'corp',
      name: 'Corp ID',
      issuer: upstreamUrl,
      clientId: UPSTREAM_CLIENT.client_id,
      clientSecret: UPSTREAM_CLIENT.client_secret,
      scopes: ['openid', 'profile'],
    },
  });
  const provider = new Provider(upstreamUrl, {
    clients: [
      {
        ...UPSTREAM_CLIENT,
        redirect_uris: [`${server.url}/v1/authorize/upstream/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ sub: id, name: `Upstream ${id}` }) };
    },
    claims: { openid: ['sub'], profile: ['name'] },
    cookies: { keys: ['a-test-cookie-key-that-is-long-enough'] },
    // Own signing key and lifetimes, so the provider does not warn about its development defaults.
    jwks: {
      keys: [
        {
          ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)),
          kid: 'k1',
          alg: 'RS256',
          use: 'sig',
        },
      ],
    },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 300, IdToken: 300 },
    pkce: { required: () => true },
  });
  handler = provider.callback() as never;
  as = await discover(server);
  registered = await register(as, 'client_secret_basic');
});

afterAll(async () => {
  await server?.close();
  upstreamHttp?.closeAllConnections();
  await new Promise((resolve) => upstreamHttp?.close(resolve));
});

function sameOrigin(a: string, b: string): boolean {
  return new URL(a).origin === new URL(b).origin;
}

interface Started {
  browser: Browser;
  verifier: string;
  state: string;
  /** Our redirect to the provider's authorization endpoint. */
  upstreamAuthorize: URL;
  /** The hidden fields of our login page (interaction id and CSRF token). */
  fields: Record<string, string>;
}

/** Our client's authorization request, then "Sign in with Corp ID" on our login page. */
async function startUpstream(): Promise<Started> {
  const browser = new Browser();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(`${server.url}/v1/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: registered.client.client_id,
    redirect_uri: registered.redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: 'read:courses-work',
    state,
  }).toString();
  const login = await browser.fetch(url.href);
  expect(login.status).toBe(200);
  const html = await login.text();
  expect(html).toContain('Sign in with Corp ID');
  const upstreamForm = /<form method="post" action="([^"]+)" id="upstream">/.exec(html)?.[1];
  expect(upstreamForm).toBe(`${server.url}/v1/authorize/upstream`);
  const { fields } = parseForm(html);
  const go = await browser.fetch(upstreamForm!, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  expect(go.status).toBe(303);
  const upstreamAuthorize = new URL(go.headers.get('location')!);
  return { browser, verifier, state, upstreamAuthorize, fields };
}

/** Follows the provider's redirects and submits its login (as `account`) and consent pages; returns our callback URL. */
async function signInUpstream(browser: Browser, start: URL, account = 'bob'): Promise<string> {
  let response = await browser.fetch(start.href);
  for (let step = 0; step < 12; step++) {
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, upstreamUrl).href;
      if (!sameOrigin(next, upstreamUrl)) return next;
      response = await browser.fetch(next);
      continue;
    }
    expect(response.status).toBe(200);
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"[^>]*method="post"/.exec(html)?.[1];
    if (!action) throw new Error(`no form on the provider's page:\n${html}`);
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g))
      fields[m[1]!] = m[2]!;
    if (html.includes('name="login"')) Object.assign(fields, { login: account, password: 'any' });
    response = await browser.fetch(new URL(action, upstreamUrl).href, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields),
    });
  }
  throw new Error('the provider did not redirect back');
}

describe('sign-in through an upstream OpenID Connect provider', () => {
  it('runs the whole flow and issues a token for the upstream user', async () => {
    const { browser, verifier, state, upstreamAuthorize } = await startUpstream();
    expect(upstreamAuthorize.origin).toBe(upstreamUrl);
    expect(upstreamAuthorize.searchParams.get('client_id')).toBe('portcullis');
    expect(upstreamAuthorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(upstreamAuthorize.searchParams.get('scope')).toBe('openid profile');
    expect(upstreamAuthorize.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{40,}$/);

    const callback = await signInUpstream(browser, upstreamAuthorize);
    expect(callback.startsWith(`${server.url}/v1/authorize/upstream/callback?`)).toBe(true);
    const consent = await browser.fetch(callback);
    expect(consent.status).toBe(200);
    const consentHtml = await consent.text();
    expect(consentHtml).toContain('Signed in as <strong>Upstream bob</strong>');
    const decided = await browser.submit(consentHtml, { decision: 'allow' });
    expect(decided.status).toBe(303);
    const location = new URL(decided.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(registered.redirectUri);

    const params = oauth.validateAuthResponse(as, registered.client, location, state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      registered.client,
      registered.auth,
      params,
      registered.redirectUri,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, registered.client, response);
    const claims = await server.as.verifyAccessToken(tokens.access_token, { audience: server.resource });
    expect(claims.sub).toBe('corp|bob');
    expect(claims.scope).toBe('read:courses-work');

    // The session now belongs to corp|bob: a second request skips both sign-ins and the remembered consent.
    const again = await browser.fetch(
      `${server.url}/v1/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: registered.client.client_id,
        redirect_uri: registered.redirectUri,
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        scope: 'read:courses-work',
        state: 'second',
      })}`,
    );
    expect(again.status).toBe(303);
    expect(new URL(again.headers.get('location')!).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a callback whose state belongs to no sign-in, and shows it instead of redirecting', async () => {
    const { browser, upstreamAuthorize } = await startUpstream();
    const callback = new URL(await signInUpstream(browser, upstreamAuthorize));
    callback.searchParams.set('state', oauth.generateRandomState());
    const response = await browser.fetch(callback.href);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    expect(errorCodeOf(html)).toBe('invalid_request');
    expect(html).toContain('unknown or already used state');
  });

  it('refuses a replayed callback', async () => {
    const { browser, upstreamAuthorize } = await startUpstream();
    const callback = await signInUpstream(browser, upstreamAuthorize, 'carol');
    const first = await browser.fetch(callback);
    expect(first.status).toBe(200);
    expect(await first.text()).toContain('Signed in as <strong>Upstream carol</strong>');
    const replay = await browser.fetch(callback);
    expect(replay.status).toBe(400);
    expect(errorCodeOf(await replay.text())).toBe('invalid_request');
  });

  it('refuses a callback delivered to another browser (login CSRF)', async () => {
    const { browser, upstreamAuthorize } = await startUpstream();
    const callback = await signInUpstream(browser, upstreamAuthorize);
    const victim = new Browser();
    const response = await victim.fetch(callback);
    expect(response.status).toBe(403);
    expect(errorCodeOf(await response.text())).toBe('access_denied');
  });

  it('refuses an ID token issued for another nonce', async () => {
    const { browser, upstreamAuthorize } = await startUpstream();
    // The provider signs whatever nonce it is given: a tampered request yields an ID token for another sign-in.
    upstreamAuthorize.searchParams.set('nonce', oauth.generateRandomNonce());
    const callback = await signInUpstream(browser, upstreamAuthorize);
    const response = await browser.fetch(callback);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    expect(errorCodeOf(html)).toBe('access_denied');
    expect(html).toContain('the sign-in with Corp ID was refused');
  });

  it("shows the provider's error to the user instead of redirecting", async () => {
    const { browser, upstreamAuthorize } = await startUpstream();
    // prompt=none without a provider session: the provider answers our callback with login_required.
    upstreamAuthorize.searchParams.set('prompt', 'none');
    const callback = await signInUpstream(browser, upstreamAuthorize);
    const response = await browser.fetch(callback);
    expect(response.status).toBe(400);
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    expect(errorCodeOf(html)).toBe('login_required');
    expect(html).toContain('Corp ID refused the sign-in: login_required');
  });

  it('refuses the record kept for the callback when it is posted as an interaction', async () => {
    const { browser, upstreamAuthorize, fields } = await startUpstream();
    const upstreamState = upstreamAuthorize.searchParams.get('state')!;
    const key = `upstream:${createHash('sha256').update(upstreamState).digest('base64url')}`;
    const response = await browser.fetch(`${server.url}/v1/authorize/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, interaction: key, username: 'alice', password: 'x' }),
    });
    expect(response.status).toBe(403);
    expect(errorCodeOf(await response.text())).toBe('access_denied');
  });

  it('refuses the upstream button without the CSRF token of the interaction', async () => {
    const browser = new Browser();
    const response = await browser.fetch(`${server.url}/v1/authorize/upstream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'interaction=x&csrf=y',
    });
    expect(response.status).toBe(403);
    expect(errorCodeOf(await response.text())).toBe('access_denied');
  });
});
