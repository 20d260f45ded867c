import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, startStack, USERS } from '../processes/stack.js';

/**
 * Headless Chromium (Debian's package, driven by playwright-core) goes through the real login and consent pages
 * once, through Envoy, and lands on the client's callback with a code that exchanges for a working token.
 */

const CHROMIUM = '/usr/bin/chromium';
const SCOPE = 'read:courses-work write:courses-work';

let stack: Stack;
let callback: Server;
let callbackUrl: string;
let context: BrowserContext;
let profile: string;
/** Screenshots of the two pages, kept for a human look (the path is printed). */
let shots: string;

beforeAll(async () => {
  [stack, callback] = await Promise.all([
    startStack(),
    new Promise<Server>((resolve) => {
      const server = createServer((_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<!doctype html><title>Signed in</title><p>Done.');
      });
      server.listen(0, '127.0.0.1', () => resolve(server));
    }),
  ]);
  callbackUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  profile = await mkdtemp(path.join(tmpdir(), 'portcullis-chromium-'));
  shots = await mkdtemp(path.join(tmpdir(), 'portcullis-screenshots-'));
  // A fresh profile per run; the flags keep Chromium from calling home or needing a GPU in CI.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await context?.close();
  await stack?.stop();
  callback?.closeAllConnections();
  await new Promise((resolve) => callback?.close(resolve));
  await rm(profile, { recursive: true, force: true });
});

/** Clicks a form's submit button and waits until the document it leads to (after redirects) has loaded. */
async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([
    page.waitForResponse(
      (response) =>
        response.request().isNavigationRequest() && (response.status() < 300 || response.status() >= 400),
    ),
    page.getByRole('button', { name: button }).click(),
  ]);
  await page.waitForLoadState('load');
}

describe('login and consent pages in headless Chromium', () => {
  it('signs in, shows the requested scopes, allows, and returns a code that exchanges for a token', async () => {
    const registered = await fetch(`${stack.issuer}/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Browser e2e',
        redirect_uris: [callbackUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };

    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const authorize = new URL(`${stack.gatewayUrl}/v1/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: callbackUrl,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      scope: SCOPE,
      state,
      resource: stack.mcpUrl,
    }).toString();

    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const loginResponse = await page.goto(authorize.href);
    expect(loginResponse!.status()).toBe(200);
    expect(loginResponse!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(await page.title()).toBe('Sign in');
    expect(await page.locator('main').textContent()).toContain('Browser e2e wants to access your account.');
    await page.getByLabel('User name').fill(USERS.alice.username);
    await page.getByLabel('Password').fill(USERS.alice.password);
    await page.screenshot({ path: path.join(shots, 'login.png'), fullPage: true });
    await submit(page, 'Sign in');
    // On a refusal the page says why; show it rather than a navigation timeout.
    expect(await page.title(), (await page.locator('body').textContent()) ?? '').toBe('Authorize access');
    expect(new URL(page.url()).pathname).toBe('/v1/authorize/consent');

    // The session cookie as the configuration asks (cookieSecure: false on this plain-http stack).
    const cookies = await context.cookies(`${stack.gatewayUrl}/v1/authorize`);
    expect(cookies.length).toBeGreaterThan(0);
    for (const cookie of cookies) {
      expect(cookie.httpOnly).toBe(true);
      expect(['Lax', 'Strict']).toContain(cookie.sameSite);
    }

    expect(await page.locator('main').textContent()).toContain('Signed in as Alice Example');
    const scopes = await page.locator('#scopes li code').allInnerTexts();
    expect(scopes).toEqual(['read:courses-work', 'write:courses-work']);
    await page.screenshot({ path: path.join(shots, 'consent.png'), fullPage: true });
    await submit(page, 'Allow');
    expect(await page.title(), (await page.locator('body').textContent()) ?? '').toBe('Signed in');

    const landed = new URL(page.url());
    expect(landed.searchParams.get('state')).toBe(state);
    expect(landed.searchParams.get('iss')).toBe(stack.issuer);
    const code = landed.searchParams.get('code')!;
    const token = await fetch(`${stack.issuer}/v1/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callbackUrl,
        client_id: clientId,
        code_verifier: verifier,
        resource: stack.mcpUrl,
      }),
    });
    expect(token.status).toBe(200);
    const tokens = (await token.json()) as { access_token: string; scope: string; token_type: string };
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: SCOPE });

    const tools = await fetch(stack.mcpUrl, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'b', version: '1' } },
      }),
    });
    expect(tools.status).toBe(200);

    for (const shot of ['login.png', 'consent.png'])
      expect((await stat(path.join(shots, shot))).size).toBeGreaterThan(1000);
    console.log(`browser e2e: screenshots in ${shots}`);
  });
});
