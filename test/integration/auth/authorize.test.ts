import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorize,
  Browser,
  discover,
  errorCodeOf,
  insecure,
  obtainTokens,
  type RegisteredClient,
  register,
  startServer,
  type TestServer,
  USER,
} from '../../processes/auth-server.js';

/** Asserts a page error: 400-ish status, never a Location header, the error code on the page. */
async function expectDirectError(response: Response, code: string, status = 400) {
  expect(response.status).toBe(status);
  expect(response.headers.get('location')).toBeNull();
  expect(errorCodeOf(await response.text())).toBe(code);
}

function expectRedirectError(
  location: URL | undefined,
  target: string,
  code: string,
  state: string,
  issuer: string,
) {
  expect(location).toBeDefined();
  expect(`${location!.origin}${location!.pathname}`).toBe(target);
  expect(location!.searchParams.get('error')).toBe(code);
  expect(location!.searchParams.get('state')).toBe(state);
  expect(location!.searchParams.get('iss')).toBe(issuer);
  expect(location!.searchParams.get('code')).toBeNull();
}

describe('authorization endpoint', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let pub: RegisteredClient;
  let web: RegisteredClient;

  beforeAll(async () => {
    server = await startServer({ limits: { registrationsPerAddress: 1000 } });
    as = await discover(server);
    pub = await register(as, 'none');
    web = await register(as, 'client_secret_basic', {
      redirect_uris: ['https://app.example/cb', 'https://app.example/other'],
    });
  });
  afterAll(() => server.close());

  const get = (params: Record<string, string>) =>
    fetch(`${server.url}/v1/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });

  it('shows an unknown client to the user instead of redirecting', async () => {
    await expectDirectError(
      await get({ client_id: 'nope', redirect_uri: 'https://evil.example/cb', response_type: 'code' }),
      'invalid_client',
    );
  });

  it('shows a missing client_id to the user', async () => {
    await expectDirectError(
      await get({ redirect_uri: 'https://evil.example/cb', response_type: 'code' }),
      'invalid_request',
    );
  });

  it.each([
    ['trailing slash', 'https://app.example/cb/'],
    ['dot segments', 'https://app.example/cb/../cb'],
    ['case change', 'https://app.example/CB'],
    ['appended query', 'https://app.example/cb?x=1'],
    ['fragment', 'https://app.example/cb#frag'],
    ['suffix host', 'https://app.example.evil/cb'],
    ['userinfo', 'https://app.example@evil.example/cb'],
    ['http downgrade', 'http://app.example/cb'],
    ['percent-encoded path', 'https://app.example/%63b'],
    ['unregistered', 'https://evil.example/cb'],
  ])('never redirects to a redirect_uri variant: %s', async (_name, redirectUri) => {
    await expectDirectError(
      await get({
        client_id: web.client.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        state: 's',
      }),
      'invalid_request',
    );
  });

  it('requires redirect_uri when several are registered', async () => {
    await expectDirectError(
      await get({ client_id: web.client.client_id, response_type: 'code' }),
      'invalid_request',
    );
  });

  it('shows repeated parameters to the user', async () => {
    const url = `${server.url}/v1/authorize?client_id=${pub.client.client_id}&redirect_uri=${encodeURIComponent(pub.redirectUri)}&redirect_uri=https%3A%2F%2Fevil.example%2F`;
    await expectDirectError(await fetch(url, { redirect: 'manual' }), 'invalid_request');
  });

  describe('loopback redirect ports (RFC 8252 §7.3)', () => {
    it('accepts another port on the registered loopback IP and redirects there', async () => {
      const result = await authorize(server, {
        client: pub.client,
        redirectUri: 'http://127.0.0.1:50123/callback',
      });
      expect(result.response.status).toBe(303);
      expect(result.location!.origin).toBe('http://127.0.0.1:50123');
      expect(result.location!.pathname).toBe('/callback');
      expect(result.location!.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('accepts another port on [::1] when [::1] is registered', async () => {
      const v6 = await register(as, 'none', { redirect_uris: ['http://[::1]/cb'] });
      const result = await authorize(server, { client: v6.client, redirectUri: 'http://[::1]:5555/cb' });
      expect(result.location!.host).toBe('[::1]:5555');
      expect(result.location!.searchParams.get('code')).toBeTruthy();
    });

    it.each([
      ['another path', 'http://127.0.0.1:50123/other'],
      ['another loopback IP', 'http://127.0.0.2:50123/callback'],
      ['https scheme', 'https://127.0.0.1:50123/callback'],
      ['localhost name', 'http://localhost:50123/callback'],
      ['added query', 'http://127.0.0.1:50123/callback?x=1'],
    ])('refuses %s', async (_name, redirectUri) => {
      await expectDirectError(
        await get({ client_id: pub.client.client_id, redirect_uri: redirectUri, response_type: 'code' }),
        'invalid_request',
      );
    });
  });

  describe('errors redirected with state and iss (after sign-in)', () => {
    it.each([
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type'],
      ['missing response_type', { response_type: undefined }, 'invalid_request'],
      ['missing code_challenge', { code_challenge: undefined }, 'invalid_request'],
      ['unknown method S512', { code_challenge_method: 'S512' }, 'invalid_request'],
      ['challenge too short', { code_challenge: 'a'.repeat(42) }, 'invalid_request'],
      ['unknown scope', { scope: 'read:courses-work admin' }, 'invalid_scope'],
      ['unknown resource', { resource: 'https://evil.example/mcp' }, 'invalid_target'],
    ])('%s', async (_name, params, code) => {
      const result = await authorize(server, pub, params as Record<string, string | undefined>);
      expect(result.response.status).toBe(303);
      expectRedirectError(result.location, pub.redirectUri, code, result.state, server.issuer);
    });

    it('user denial → access_denied', async () => {
      const fresh = await register(as, 'none'); // no remembered consent
      const result = await authorize(server, fresh, {}, { decision: 'deny' });
      expectRedirectError(result.location, fresh.redirectUri, 'access_denied', result.state, server.issuer);
    });

    it('shows the login page first instead of redirecting an unauthenticated user (no open redirector)', async () => {
      const response = await get({
        client_id: pub.client.client_id,
        redirect_uri: pub.redirectUri,
        response_type: 'code',
        scope: 'bogus',
        state: 'x',
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('location')).toBeNull();
      expect(await response.text()).toContain('name="password"');
    });
  });

  it('success carries code, state and iss; oauth4webapi validates the response', async () => {
    const result = await authorize(server, pub);
    expect(result.response.status).toBe(303);
    const params = oauth.validateAuthResponse(as, pub.client, result.location!, result.state);
    expect(params.get('iss')).toBe(server.issuer);
  });

  it('remembers consent per client and scopes: a second request skips the pages for a signed-in browser', async () => {
    const browser = new Browser();
    await authorize(server, pub, {}, { browser });
    const again = await authorize(server, pub, {}, { browser });
    expect(again.response.status).toBe(303);
    expect(again.location!.searchParams.get('code')).toBeTruthy();
    // Wider scopes than consented: the consent page is shown again.
    const wider = await browser.fetch(
      `${server.url}/v1/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: pub.client.client_id,
        redirect_uri: pub.redirectUri,
        code_challenge: 'x'.repeat(43),
        scope: 'read:grades-work',
      })}`,
    );
    expect(wider.status).toBe(200);
    expect(await wider.text()).toContain('read:grades-work');
  });

  it('serves pages with anti-framing, no-cache and cookie protections', async () => {
    const response = await get({
      client_id: pub.client.client_id,
      redirect_uri: pub.redirectUri,
      response_type: 'code',
      code_challenge: 'x'.repeat(43),
    });
    expect(response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const cookie = response.headers.getSetCookie()[0]!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Secure/);
  });

  describe('login and consent forms', () => {
    let formClient: RegisteredClient; // never completes a consent, so nothing is remembered for it
    beforeAll(async () => {
      formClient = await register(as, 'none');
    });

    /** The first page of a new request: the login page, or the consent page for a signed-in browser. */
    async function openLogin(browser: Browser) {
      const response = await browser.fetch(
        `${server.url}/v1/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: formClient.client.client_id,
          redirect_uri: formClient.redirectUri,
          code_challenge: 'x'.repeat(43),
          state: 'st',
        })}`,
      );
      return response.text();
    }

    async function openConsent(browser: Browser) {
      const login = await browser.submit(await openLogin(browser), {
        username: USER.username,
        password: USER.password,
      });
      expect(login.status).toBe(303); // never 307 after a POST
      return (await browser.fetch(login.headers.get('location')!)).text();
    }

    it('refuses a consent POST without the CSRF token and issues no code', async () => {
      const browser = new Browser();
      const html = await openConsent(browser);
      const response = await browser.submit(html, { decision: 'allow', csrf: '' });
      await expectDirectError(response, 'access_denied', 403);
    });

    it('refuses a consent POST from another origin', async () => {
      const browser = new Browser();
      const html = await openConsent(browser);
      const response = await browser.submit(html, { decision: 'allow' }, { origin: 'https://evil.example' });
      await expectDirectError(response, 'access_denied', 403);
    });

    it('refuses a consent POST from another browser session (stolen form)', async () => {
      const victim = new Browser();
      const html = await openConsent(victim);
      const attacker = new Browser();
      await openLogin(attacker);
      const response = await attacker.submit(html, { decision: 'allow' });
      await expectDirectError(response, 'access_denied', 403);
    });

    it('refuses a CSRF token replayed for another pending request', async () => {
      const browser = new Browser();
      const first = await openConsent(browser);
      const second = await openLogin(browser); // signed in: straight to a second consent page
      expect(second).toContain('name="decision"');
      const csrfOfFirst = /name="csrf" value="([^"]+)"/.exec(first)![1]!;
      const response = await browser.submit(second, { decision: 'allow', csrf: csrfOfFirst });
      await expectDirectError(response, 'access_denied', 403);
    });

    it('rotates the session id at sign-in (no session fixation)', async () => {
      const browser = new Browser();
      await openLogin(browser);
      const before = browser.cookies.get('portcullis_auth');
      await openConsent(browser);
      expect(browser.cookies.get('portcullis_auth')).not.toBe(before);
    });

    it('throttles repeated wrong passwords per account with 429, even for the right password', async () => {
      const local = await startServer();
      try {
        const localAs = await discover(local);
        const client = await register(localAs, 'none');
        for (let i = 0; i < 5; i++) {
          const r = await authorize(local, client, {}, { password: 'wrong' });
          expect(r.response.status).toBe(401);
        }
        const locked = await authorize(local, client, {}, { password: USER.password });
        expect(locked.response.status).toBe(429);
        expect(Number(locked.response.headers.get('retry-after'))).toBeGreaterThan(0);
      } finally {
        await local.close();
      }
    });
  });

  it('refuses plain PKCE and stops advertising it when allowPlainPkce is false', async () => {
    const strict = await startServer({ allowPlainPkce: false });
    try {
      const strictAs = await discover(strict);
      expect(strictAs.code_challenge_methods_supported).toEqual(['S256']);
      const client = await register(strictAs, 'none');
      const result = await authorize(strict, client, {
        code_challenge_method: 'plain',
        code_challenge: 'p'.repeat(43),
      });
      expectRedirectError(
        result.location,
        client.redirectUri,
        'invalid_request',
        result.state,
        strict.issuer,
      );
      // An absent method is plain (OAuth 2.1 §4.1.1): refused too, and the description says what to send.
      const absent = await authorize(strict, client, { code_challenge_method: undefined });
      expectRedirectError(
        absent.location,
        client.redirectUri,
        'invalid_request',
        absent.state,
        strict.issuer,
      );
      expect(absent.location?.searchParams.get('error_description')).toMatch(
        /code_challenge_method is required and must be S256/,
      );
    } finally {
      await strict.close();
    }
  });

  it('accepts the token request of a public client with oauth4webapi after a non-default loopback port', async () => {
    const registered = { ...pub, redirectUri: 'http://127.0.0.1:61000/callback' };
    const { tokens } = await obtainTokens(server, as, registered);
    expect(tokens.access_token).toBeTruthy();
    void insecure;
  });
});
