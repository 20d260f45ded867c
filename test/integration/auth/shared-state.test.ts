import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../src/auth/index.js';
import { loadConfigFile } from '../../../src/config/load.js';
import { freePort } from '../../../src/config/plan.js';
import { createService, type Service } from '../../../src/service/service.js';
import { Browser, postForm, USER } from '../../processes/auth-server.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';

/**
 * Two service processes' worth of authorization servers — two Koa apps built by createService from one
 * configuration with `state.redis`, on two loopback ports — behind one public URL (instance A's, as a load
 * balancer would present it). Every step is sent to the instance a load balancer might have picked, so the
 * state it needs must have come through Redis.
 */

interface Instance {
  service: Service;
  url: string;
  http: Server;
}

let redis: RunningRedis;
let directory: string;
let a: Instance;
let b: Instance;
let publicUrl: string;
let mcpUrl: string;
const REDIRECT = 'http://127.0.0.1:43210/callback';
/** Cookies, codes and tokens handed out by the cases, none of which may appear in Redis. */
const secrets: string[] = [];

async function listen(service: Service, port: number): Promise<Instance> {
  const http = service.app.listen(port, '127.0.0.1');
  await new Promise<void>((resolve) => http.once('listening', () => resolve()));
  return { service, url: `http://127.0.0.1:${port}`, http };
}

beforeAll(async () => {
  redis = await startRedis();
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-shared-auth-'));
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  await writeFile(
    path.join(directory, 'keys.json'),
    JSON.stringify({ keys: [{ ...(await exportJWK(privateKey)), kid: 'shared-1', alg: 'ES256' }] }),
  );
  const portA = await freePort();
  publicUrl = `http://127.0.0.1:${portA}`;
  mcpUrl = `${publicUrl}/v1/mcp`;
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(
    file,
    `products: [{ id: courses }]
state:
  redis: { url: "${redis.url}", keyPrefix: "shared-test:", commandTimeoutMs: 2000 }
auth:
  issuer: ${publicUrl}
  baseUrl: ${publicUrl}
  cookieSecure: false
  signingKeys: { file: keys.json }
  users:
    - { username: ${USER.username}, passwordHash: "${await hashPassword(USER.password)}" }
`,
  );
  const loaded = await loadConfigFile(file);
  const options = { gatewayUrl: 'http://127.0.0.1:1' };
  a = await listen(await createService(loaded, options), portA);
  b = await listen(await createService(loaded, options), await freePort());
});

afterAll(async () => {
  for (const instance of [a, b]) {
    if (!instance) continue;
    await instance.service.close();
    instance.http.closeAllConnections();
    await new Promise((resolve) => instance.http.close(resolve));
  }
  await redis?.close();
  await rm(directory, { recursive: true, force: true });
});

/** The same URL as served by another instance (what the load balancer did with this request). */
const at = (instance: Instance, url: string) => url.replace(publicUrl, instance.url);

async function registerClient(instance: Instance): Promise<string> {
  const response = await fetch(`${instance.url}/v1/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { client_id: string }).client_id;
}

/** /authorize at `start`; every page after it is fetched or posted at the instance `route` picks for it. */
async function authorize(
  browser: Browser,
  clientId: string,
  start: Instance,
  route: (step: number) => Instance,
): Promise<{ code: string; verifier: string; pages: string[] }> {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = new URL(`${start.url}/v1/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: 'read:courses-work',
    state: 'st',
    resource: mcpUrl,
  }))
    url.searchParams.set(k, v);
  let response = await browser.fetch(url.href);
  const pages: string[] = [];
  for (let step = 0; step < 6; step++) {
    const location = response.headers.get('location');
    if (location?.startsWith(REDIRECT)) {
      const code = new URL(location).searchParams.get('code');
      if (!code) throw new Error(`no code in ${location}`);
      return { code, verifier, pages };
    }
    if (location) {
      response = await browser.fetch(at(route(step), location));
      continue;
    }
    expect(response.status).toBe(200);
    const html = await response.text();
    const form = /<form method="post" action="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');
    if (!form) throw new Error(`no form in page:\n${html}`);
    const fields: Record<string, string> = {};
    for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      fields[m[1]!] = m[2]!;
    if (html.includes('name="password"')) {
      pages.push('login');
      Object.assign(fields, { username: USER.username, password: USER.password });
    } else {
      pages.push('consent');
      fields.decision = 'allow';
    }
    response = await browser.fetch(at(route(step), form), {
      method: 'POST',
      body: new URLSearchParams(fields),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
  }
  throw new Error(`authorization did not end in a redirect (${response.status})`);
}

const redeem = (instance: Instance, clientId: string, code: string, verifier: string) =>
  postForm(`${instance.url}/v1/token`, {
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: clientId,
  });

const refresh = (instance: Instance, clientId: string, token: string) =>
  postForm(`${instance.url}/v1/token`, {
    grant_type: 'refresh_token',
    refresh_token: token,
    client_id: clientId,
  });

/** What each instance's verifyAccessToken says of a token: `ok` or the OAuthError code. */
async function verdicts(token: string): Promise<string[]> {
  return Promise.all(
    [a, b].map((instance) =>
      instance.service.authorizationServer!.verifyAccessToken(token, { audience: mcpUrl }).then(
        () => 'ok',
        (error: { code?: string }) => error.code ?? String(error),
      ),
    ),
  );
}

describe('two authorization servers sharing one Redis', () => {
  it('a client registered at one logs in across both, and a session cookie from one works at the other', async () => {
    const clientId = await registerClient(b);
    const browser = new Browser();
    // /authorize at A, the login posted to B, the consent page and decision at A.
    const first = await authorize(browser, clientId, a, (step) => (step === 0 ? b : a));
    expect(first.pages).toEqual(['login', 'consent']);
    expect([...browser.cookies.keys()].length).toBeGreaterThan(0);
    // The session cookie B set is honoured at A, and the consent remembered at A is honoured at B: no page.
    const second = await authorize(browser, clientId, a, () => b);
    expect(second.pages).toEqual([]);
    const again = await authorize(browser, clientId, b, () => a);
    expect(again.pages).toEqual([]);
    // A fresh browser has no session anywhere; the consent alice gave at A is remembered at B.
    const stranger = await authorize(new Browser(), clientId, b, () => b);
    expect(stranger.pages).toEqual(['login']);
    secrets.push(...browser.cookies.values());
  });

  it('redeems a code issued by one at the other exactly once; the replay revokes what the first gave', async () => {
    const clientId = await registerClient(a);
    const browser = new Browser();
    const { code, verifier } = await authorize(browser, clientId, a, () => a);
    const first = await redeem(b, clientId, code, verifier);
    expect(first.status).toBe(200);
    secrets.push(code, first.json!.refresh_token as string);
    const access = first.json!.access_token as string;
    expect(await verdicts(access)).toEqual(['ok', 'ok']);

    const replay = await redeem(a, clientId, code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.json).toMatchObject({ error: 'invalid_grant' });
    expect(await verdicts(access)).toEqual(['invalid_token', 'invalid_token']);
    const refreshed = await refresh(b, clientId, first.json!.refresh_token as string);
    expect(refreshed.status).toBe(400);
  });

  it('lets exactly one of two concurrent redemptions at the two instances consume the code', async () => {
    const clientId = await registerClient(a);
    const browser = new Browser();
    for (let round = 0; round < 5; round++) {
      const { code, verifier } = await authorize(browser, clientId, b, () => a);
      const answers = await Promise.all([
        redeem(a, clientId, code, verifier),
        redeem(b, clientId, code, verifier),
      ]);
      const descriptions = answers.map((r) => r.json?.error_description);
      // One consumed it; the other found it used, which (by design) revokes the grant. The winner's tokens,
      // if its issuance got in first, are then refused everywhere.
      expect(descriptions.filter((d) => d === 'the authorization code has already been used')).toHaveLength(
        1,
      );
      const winners = answers.filter((r) => r.status === 200);
      expect(winners.length).toBeLessThanOrEqual(1);
      for (const winner of winners)
        expect(await verdicts(winner.json!.access_token as string)).toEqual([
          'invalid_token',
          'invalid_token',
        ]);
    }
  });

  it('refuses a refresh token rotated at one as reused at the other and revokes the family at both', async () => {
    const clientId = await registerClient(a);
    const { code, verifier } = await authorize(new Browser(), clientId, a, () => b);
    const tokens = await redeem(a, clientId, code, verifier);
    expect(tokens.status).toBe(200);
    const rotated = await refresh(a, clientId, tokens.json!.refresh_token as string);
    expect(rotated.status).toBe(200);
    secrets.push(tokens.json!.refresh_token as string, rotated.json!.refresh_token as string);
    const accessTokens = [tokens.json!.access_token as string, rotated.json!.access_token as string];
    for (const token of accessTokens) expect(await verdicts(token)).toEqual(['ok', 'ok']);

    const reused = await refresh(b, clientId, tokens.json!.refresh_token as string);
    expect(reused.status).toBe(400);
    expect(reused.json).toEqual({
      error: 'invalid_grant',
      error_description: 'the refresh token has already been used; the grant is revoked',
    });
    for (const token of accessTokens)
      expect(await verdicts(token)).toEqual(['invalid_token', 'invalid_token']);
    for (const instance of [a, b]) {
      const latest = await refresh(instance, clientId, rotated.json!.refresh_token as string);
      expect(latest.status).toBe(400);
      expect(latest.json).toMatchObject({ error: 'invalid_grant' });
    }
  });

  it('refuses an access token revoked at one instance at both', async () => {
    const clientId = await registerClient(b);
    const { code, verifier } = await authorize(new Browser(), clientId, b, () => b);
    const tokens = await redeem(b, clientId, code, verifier);
    const access = tokens.json!.access_token as string;
    expect(await verdicts(access)).toEqual(['ok', 'ok']);
    const revoked = await postForm(`${a.url}/v1/token`, {
      token: access,
      token_type_hint: 'access_token',
      client_id: clientId,
    });
    expect(revoked.status).toBe(200);
    expect(await verdicts(access)).toEqual(['invalid_token', 'invalid_token']);
    // The refresh token of the same grant is untouched: revoking one access token is not a family revocation.
    expect((await refresh(a, clientId, tokens.json!.refresh_token as string)).status).toBe(200);
  });

  it('keeps its state under the configured prefix, short-lived keys with a TTL, no secret in clear', async () => {
    const reader = new Redis(redis.url);
    try {
      const keys = await reader.keys('*');
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((k) => !k.startsWith('shared-test:auth:'))).toEqual([]);
      const expiring = keys.filter((k) => /:(code|refresh|session|interaction|consent|deny|grant):/.test(k));
      const ttls = await Promise.all(expiring.map((key) => reader.ttl(key)));
      expect(ttls.filter((ttl) => ttl <= 0)).toEqual([]);
      const contents = await Promise.all(
        keys.map(async (key) => {
          const type = await reader.type(key);
          const value =
            type === 'string'
              ? await reader.getBuffer(key)
              : type === 'hash'
                ? JSON.stringify(await reader.hgetall(key))
                : '';
          return `${key}\n${value?.toString('latin1')}`;
        }),
      );
      expect(secrets.length).toBeGreaterThanOrEqual(5);
      for (const secret of secrets) expect(contents.join('\n')).not.toContain(secret);
    } finally {
      reader.disconnect();
    }
  });
});
