import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, BrowserAt, sendFrom } from '../helpers/source-address.js';
import { type Stack, startStack, USERS } from '../helpers/stack.js';

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
