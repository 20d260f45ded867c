import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeMessage } from '../doubles/mcp.js';
import { type Answer, BrowserAt, sendFrom } from '../doubles/source-address.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * The authorization server's abuse limits and security log as `portcullis up` runs them, every request through
 * Envoy. Each test plays its clients from its own loopback source addresses (127.0.0.x), so one test's counters
 * never touch another's, and an attacker and a victim really are two addresses.
 */

let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    authYaml: `  limits:
    clientAuthFailures: 3
    loginFailuresPerAddress: 3
    loginFailuresPerAccount: 100
    registrationsPerAddress: 3
    authorizationsPerAddress: 500
    pendingAuthorizations: 100
`,
  });
});

afterAll(async () => {
  await stack?.stop();
});

const REDIRECT_URI = 'http://127.0.0.1:43210/callback';

/** RFC 7591 registration from `from`, with extra request headers (a forged X-Forwarded-For). */
function registerFrom(
  from: string,
  method: 'none' | 'client_secret_basic',
  headers: Record<string, string> = {},
): Promise<Answer> {
  return sendFrom(from, `${stack.issuer}/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      client_name: 'abuse test',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: method,
    }),
  });
}

async function registeredFrom(from: string, method: 'none' | 'client_secret_basic') {
  const answer = await registerFrom(from, method);
  expect(answer.status, answer.text).toBe(201);
  const body = answer.json();
  return {
    clientId: body.client_id as string,
    secret: body.client_secret as string | undefined,
    registrationToken: body.registration_access_token as string,
  };
}

function basic(clientId: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

/** A token request whose client authentication is the point: the code is bogus (400 once authenticated). */
function tokenRequestFrom(from: string, authorization: string, headers: Record<string, string> = {}) {
  return sendFrom(from, `${stack.issuer}/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization, ...headers },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: 'not-a-code',
      code_verifier: 'v'.repeat(43),
      redirect_uri: REDIRECT_URI,
    }).toString(),
  });
}

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function authorizeUrl(clientId: string, extra: Record<string, string> = {}): string {
  const url = new URL(`${stack.gatewayUrl}/v1/authorize`);
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    code_challenge: pkce().challenge,
    code_challenge_method: 'S256',
    scope: 'read:courses-work',
    state: 'st-1',
    ...extra,
  };
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.href;
}

/** Opens the login page in `browser` and returns its hidden fields and action. */
async function loginPage(browser: BrowserAt, clientId: string) {
  const page = await browser.send(authorizeUrl(clientId));
  expect(page.status, page.text).toBe(200);
  const action = /<form method="post" action="([^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
  const fields: Record<string, string> = {};
  for (const m of page.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = m[2]!;
  return { action, fields };
}

let forged = 0;
/** A different documentation-range address on every call: what an attacker rotating X-Forwarded-For sends. */
function rotatingForwardedFor(): Record<string, string> {
  forged += 1;
  return { 'x-forwarded-for': `198.51.100.${forged % 250}` };
}

describe('limits are keyed on the address Envoy saw, not on X-Forwarded-For', () => {
  it('registrations: rotating X-Forwarded-For does not escape the per-address limit; another address is not affected', async () => {
    const attacker = '127.0.0.21';
    for (let i = 0; i < 3; i++) {
      const answer = await registerFrom(attacker, 'none', rotatingForwardedFor());
      expect(answer.status, answer.text).toBe(201);
    }
    const refused = await registerFrom(attacker, 'none', rotatingForwardedFor());
    expect(refused.status).toBe(429);
    expect(refused.json().error).toBe('temporarily_unavailable');
    // The attacker's limit is not the victim's, even when the attacker names the victim's address.
    const victim = await registerFrom('127.0.0.22', 'none', { 'x-forwarded-for': attacker });
    expect(victim.status, victim.text).toBe(201);
  });

  it('client authentication: rotating X-Forwarded-For does not escape the failure limit', async () => {
    const client = await registeredFrom('127.0.0.31', 'client_secret_basic');
    const attacker = '127.0.0.32';
    for (let i = 0; i < 3; i++) {
      const answer = await tokenRequestFrom(
        attacker,
        basic(client.clientId, 'wrong'),
        rotatingForwardedFor(),
      );
      expect(answer.status, answer.text).toBe(401);
    }
    const refused = await tokenRequestFrom(attacker, basic(client.clientId, 'wrong'), rotatingForwardedFor());
    expect(refused.status, refused.text).toBe(429);
  });

  it("client authentication: failures sent with the victim's address in X-Forwarded-For do not lock the victim out", async () => {
    const victim = '127.0.0.33';
    const client = await registeredFrom(victim, 'client_secret_basic');
    for (let i = 0; i < 4; i++) {
      await tokenRequestFrom('127.0.0.34', basic(client.clientId, 'wrong'), { 'x-forwarded-for': victim });
    }
    // The right secret authenticates; the bogus code is what fails.
    const answer = await tokenRequestFrom(victim, basic(client.clientId, client.secret!));
    expect({ status: answer.status, error: answer.json().error }).toEqual({
      status: 400,
      error: 'invalid_grant',
    });
  });

  it('sign-in: rotating X-Forwarded-For does not escape the per-address failure limit; the victim still signs in', async () => {
    const client = await registeredFrom('127.0.0.41', 'none');
    const attacker = new BrowserAt('127.0.0.42');
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const page = await loginPage(attacker, client.clientId);
      const answer = await attacker.post(
        page.action,
        { ...page.fields, username: 'nobody', password: 'guess' },
        rotatingForwardedFor(),
      );
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);

    const victim = new BrowserAt('127.0.0.43');
    const page = await loginPage(victim, client.clientId);
    const answer = await victim.post(
      page.action,
      { ...page.fields, username: USERS.alice.username, password: USERS.alice.password },
      { 'x-forwarded-for': '127.0.0.42' },
    );
    expect(answer.status, answer.text).not.toBe(429);
    expect([200, 303]).toContain(answer.status);
  });
});

describe('anonymous authorization requests are bounded', () => {
  it('an oversized parameter is refused with a 400 page naming it, never redirected', async () => {
    const client = await registeredFrom('127.0.0.81', 'none');
    for (const [name, length] of [
      ['state', 14_000],
      ['scope', 1025],
      ['redirect_uri', 2049],
    ] as const) {
      const value =
        name === 'redirect_uri'
          ? `${REDIRECT_URI}?${'x'.repeat(length)}`.slice(0, length)
          : 'x'.repeat(length);
      const answer = await sendFrom('127.0.0.81', authorizeUrl(client.clientId, { [name]: value }));
      expect(answer.status, name).toBe(400);
      expect(answer.headers.location).toBeUndefined();
      expect(answer.headers['set-cookie']).toBeUndefined();
      expect(answer.text).toContain(`${name} must be at most`);
      expect(/<code id="error">([^<]*)<\/code>/.exec(answer.text)?.[1]).toBe('invalid_request');
    }
  });

  it('1,000 requests keep only the newest pendingAuthorizations (100) pending; past the per-address limit → 429', async () => {
    const client = await registeredFrom('127.0.0.71', 'none');
    const first = new BrowserAt('127.0.0.71');
    const second = new BrowserAt('127.0.0.72');
    const state = 's'.repeat(1000);
    const pages: { browser: BrowserAt; text: string }[] = [];
    for (const browser of [first, second]) {
      for (let i = 0; i < 500; i++) {
        const page = await browser.send(authorizeUrl(client.clientId, { state }));
        expect(page.status).toBe(200);
        // Only the ones around the cap are needed again; the others are dropped at once.
        const index = pages.length;
        pages.push({ browser, text: index === 0 || index === 899 || index === 900 ? page.text : '' });
      }
    }
    const signIn = (page: { browser: BrowserAt; text: string }) => {
      const form = formOf(page.text);
      return page.browser.post(form.action, {
        ...form.fields,
        username: USERS.alice.username,
        password: USERS.alice.password,
      });
    };
    // The first 900 were dropped, oldest first; the newest 100 are still there.
    expect((await signIn(pages[0]!)).status).toBe(403);
    expect((await signIn(pages[899]!)).status).toBe(403);
    const kept = await signIn(pages[900]!);
    expect(kept.status, kept.text).toBe(303);

    const refused = await first.send(authorizeUrl(client.clientId));
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  });
});

/** Every credential a test handled, so the last test can check that none reached the log. */
const secrets: string[] = [];

/** Signs `browser` in as alice, allows, and returns the code the client's callback got, with its verifier. */
async function signedInCode(browser: BrowserAt, clientId: string) {
  const { verifier, challenge } = pkce();
  const page = await browser.send(authorizeUrl(clientId, { code_challenge: challenge }));
  expect(page.status, page.text).toBe(200);
  const login = formOf(page.text);
  const afterLogin = await browser.post(login.action, {
    ...login.fields,
    username: USERS.alice.username,
    password: USERS.alice.password,
  });
  expect(afterLogin.status, afterLogin.text).toBe(303);
  let callback = new URL(afterLogin.headers.location!, stack.gatewayUrl);
  // A consent given before is remembered: the sign-in then redirects to the client at once.
  if (callback.origin === stack.gatewayUrl) {
    const consent = formOf((await browser.send(callback.href)).text);
    const allowed = await browser.post(consent.action, { ...consent.fields, decision: 'allow' });
    callback = new URL(allowed.headers.location!);
  }
  expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
  const code = callback.searchParams.get('code')!;
  secrets.push(code, verifier);
  return { code, verifier };
}

function formOf(html: string) {
  const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[m[1]!] = m[2]!;
  return { action, fields };
}

function tokenFormFrom(from: string, form: Record<string, string>) {
  return sendFrom(from, `${stack.issuer}/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

function mcpInitializeFrom(from: string, token: string) {
  return sendFrom(from, stack.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(initializeMessage('2025-06-18')),
  });
}

describe('a deleted client (RFC 7592 §2.3)', () => {
  it('loses its access tokens at the MCP endpoint and its refresh tokens at the token endpoint', async () => {
    const from = '127.0.0.51';
    const client = await registeredFrom(from, 'none');
    secrets.push(client.registrationToken);
    const { code, verifier } = await signedInCode(new BrowserAt(from), client.clientId);
    const tokens = await tokenFormFrom(from, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: client.clientId,
    });
    expect(tokens.status, tokens.text).toBe(200);
    const { access_token: accessToken, refresh_token: refreshToken } = tokens.json() as Record<
      string,
      string
    >;
    secrets.push(accessToken!, refreshToken!);
    expect((await mcpInitializeFrom(from, accessToken!)).status).toBe(200);

    const deleted = await sendFrom(from, `${stack.issuer}/v1/register/${client.clientId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${client.registrationToken}` },
    });
    expect(deleted.status).toBe(204);

    const refused = await mcpInitializeFrom(from, accessToken!);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('invalid_token');
    const refreshed = await tokenFormFrom(from, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken!,
      client_id: client.clientId,
    });
    expect({ status: refreshed.status, error: refreshed.json().error }).toEqual({
      status: 401,
      error: 'invalid_client',
    });
  });
});

describe('the security log', () => {
  it('has one JSON line per security event, with the address Envoy saw, and no secret anywhere in the output', async () => {
    const from = '127.0.0.61';
    const client = await registeredFrom(from, 'client_secret_basic');
    secrets.push(client.secret!, client.registrationToken);
    const auth = basic(client.clientId, client.secret!);
    // A code redeemed twice, then a refresh token used twice.
    const { code, verifier } = await signedInCode(new BrowserAt(from), client.clientId);
    const exchange = () =>
      sendFrom(from, `${stack.issuer}/v1/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: REDIRECT_URI,
        }).toString(),
      });
    expect((await exchange()).status).toBe(200);
    expect((await exchange()).json().error).toBe('invalid_grant');
    const second = await signedInCode(new BrowserAt(from), client.clientId);
    const issued = await sendFrom(from, `${stack.issuer}/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: second.code,
        code_verifier: second.verifier,
        redirect_uri: REDIRECT_URI,
      }).toString(),
    });
    const refreshToken = issued.json().refresh_token as string;
    secrets.push(refreshToken, issued.json().access_token as string);
    const refresh = () =>
      sendFrom(from, `${stack.issuer}/v1/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
      });
    const rotated = await refresh();
    expect(rotated.status).toBe(200);
    secrets.push(rotated.json().refresh_token as string, rotated.json().access_token as string);
    expect((await refresh()).json().error).toBe('invalid_grant');
    // A password typed into the user name field must not reach the log either.
    const browser = new BrowserAt(from);
    const page = await loginPage(browser, client.clientId);
    await browser.post(page.action, {
      ...page.fields,
      username: USERS.alice.password,
      password: USERS.alice.username,
    });

    const events = () =>
      stack
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{') && line.includes('"event":"security"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const expected: [string, Record<string, unknown>][] = [
      [
        'client.registered',
        { address: from, client_id: client.clientId, auth_method: 'client_secret_basic' },
      ],
      ['login.succeeded', { address: from, client_id: client.clientId, username: 'alice' }],
      ['authorization_code.replayed', { address: from, client_id: client.clientId, username: 'alice' }],
      ['refresh_token.reused', { address: from, client_id: client.clientId, username: 'alice' }],
      ['login.failed', { address: from, client_id: client.clientId, reason: 'unknown_user' }],
      // from the earlier tests
      ['login.failed', { address: '127.0.0.42', reason: 'unknown_user' }],
      ['login.locked', { address: '127.0.0.42', limit: 'login.address' }],
      ['rate_limit.refused', { address: '127.0.0.42', limit: 'login.address' }],
      ['rate_limit.refused', { address: '127.0.0.21', limit: 'registration' }],
      ['client_auth.failed', { address: '127.0.0.32', reason: 'wrong_secret' }],
      ['rate_limit.refused', { address: '127.0.0.32', limit: 'client_auth' }],
      ['client.deleted', { address: '127.0.0.51' }],
      ['rate_limit.refused', { address: '127.0.0.71', limit: 'authorization' }],
    ];
    await until(
      () =>
        expected.every(([type, fields]) =>
          events().some(
            (event) => event.type === type && Object.entries(fields).every(([k, v]) => event[k] === v),
          ),
        ),
      `the security events ${expected.map(([type]) => type).join(', ')}`,
      10_000,
    ).catch((error: Error) => {
      throw new Error(
        `${error.message}; logged:\n${events()
          .map((e) => JSON.stringify(e))
          .join('\n')}`,
      );
    });
    // Lines of the service's log, in its one shape.
    for (const event of events()) {
      expect(event).toMatchObject({ process: 'service', level: 'info', message: `security ${event.type}` });
      expect(Number.isNaN(Date.parse(event.time as string))).toBe(false);
    }
    // No credential appears anywhere in what `up` printed, log lines included.
    const output = stack.output();
    for (const secret of [...secrets, USERS.alice.password]) expect(output).not.toContain(secret);
  });
});
