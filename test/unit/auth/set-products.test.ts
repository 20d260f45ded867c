import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  createAuthorizationServer,
  hashPassword,
} from '../../../src/auth/index.js';
import { recordingLogger } from '../../doubles/logger.js';

/**
 * A reloaded configuration changes the products, so the scopes, of a running AS: what it advertises and what it
 * accepts move together, and what it issued before stays valid.
 */

const USER = { username: 'alice', password: 'correct horse battery staple' };
const REDIRECT = 'http://127.0.0.1:43210/callback';

let as: AuthorizationServer;
let url: string;
let close: () => Promise<void>;

beforeAll(async () => {
  const app = new Koa();
  // Koa composes its middleware at listen; the AS needs the URL first.
  app.use((ctx, next) => as.middleware(ctx, next));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  as = await createAuthorizationServer({
    issuer: url,
    baseUrl: url,
    products: ['courses'],
    users: [{ username: USER.username, passwordHash: await hashPassword(USER.password) }],
    cookieSecure: false,
    logger: recordingLogger().logger,
  });
  close = async () => {
    await as.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
});
afterAll(() => close?.());

async function scopesSupported(): Promise<unknown> {
  const response = await fetch(`${url}/.well-known/oauth-authorization-server`);
  return ((await response.json()) as { scopes_supported: unknown }).scopes_supported;
}

function register(scope?: string): Promise<Response> {
  return fetch(`${url}/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      ...(scope ? { scope } : {}),
    }),
  });
}

/** Signs in on the login page for an authorization request and returns where the AS sends the browser next. */
async function authorize(clientId: string, scope: string): Promise<URL> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    scope,
    state: 's1',
    code_challenge: createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await fetch(`${url}/v1/authorize?${query}`, { redirect: 'manual' });
  const html = await page.text();
  const cookie = page.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
  const fields = Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]),
  );
  const login = await fetch(action, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: url },
    body: new URLSearchParams({ ...fields, username: USER.username, password: USER.password }),
  });
  return new URL(login.headers.get('location') ?? `${url}/no-redirect-${login.status}`, url);
}

describe('AuthorizationServer.setProducts', () => {
  it('changes the scopes it advertises, registers and authorizes together; earlier tokens stay valid', async () => {
    const before = await as.mintServiceToken({
      subject: 'alice',
      audience: `${url}/v1/mcp`,
      scope: ['read:courses-work'],
    });
    expect(await scopesSupported()).toEqual(['read:courses-work', 'write:courses-work']);
    expect((await register('read:labs-work')).status).toBe(400);
    const client = ((await (await register()).json()) as { client_id: string }).client_id;
    const refused = await authorize(client, 'read:labs-work');
    expect(refused.origin + refused.pathname).toBe(REDIRECT);
    expect(refused.searchParams.get('error')).toBe('invalid_scope');

    as.setProducts(['courses', 'labs']);

    expect(await scopesSupported()).toEqual([
      'read:courses-work',
      'write:courses-work',
      'read:labs-work',
      'write:labs-work',
    ]);
    expect(as.metadata().scopes_supported).toEqual(await scopesSupported());
    expect((await register('read:labs-work')).status).toBe(201);
    const accepted = await authorize(client, 'read:labs-work');
    // Past validation: the consent page (same origin), not an error at the client.
    expect(accepted.searchParams.get('error')).toBeNull();
    expect(accepted.origin + accepted.pathname).toBe(`${url}/v1/authorize/consent`);
    await expect(
      as.verifyAccessToken(before, { audience: `${url}/v1/mcp`, requiredScopes: ['read:courses-work'] }),
    ).resolves.toMatchObject({ sub: 'alice' });

    as.setProducts(['labs']);
    expect(await scopesSupported()).toEqual(['read:labs-work', 'write:labs-work']);
    expect((await register('read:courses-work')).status).toBe(400);
    await expect(
      as.verifyAccessToken(before, { audience: `${url}/v1/mcp`, requiredScopes: ['read:courses-work'] }),
    ).resolves.toMatchObject({ sub: 'alice' });
  });

  // MCP 2025-11-25: an SDK client registers with its first challenge's (minimal) scope and steps up later.
  it('authorizes a registered client for any scope the server supports, beyond the one it registered', async () => {
    as.setProducts(['courses']);
    const registered = await register('read:courses-work');
    const client = ((await registered.json()) as { client_id: string }).client_id;
    const wider = await authorize(client, 'read:courses-work write:courses-work');
    expect(wider.searchParams.get('error')).toBeNull();
    expect(wider.origin + wider.pathname).toBe(`${url}/v1/authorize/consent`);
  });

  it('stops authorizing a registered client for the scopes of a product that was removed', async () => {
    as.setProducts(['courses', 'labs']);
    const registered = await register('read:labs-work read:courses-work');
    const client = ((await registered.json()) as { client_id: string }).client_id;
    expect((await authorize(client, 'read:labs-work')).searchParams.get('error')).toBeNull();

    as.setProducts(['courses']);
    const refused = await authorize(client, 'read:labs-work');
    expect(refused.origin + refused.pathname).toBe(REDIRECT);
    expect(refused.searchParams.get('error')).toBe('invalid_scope');
    // What the client still may have is unchanged.
    expect((await authorize(client, 'read:courses-work')).searchParams.get('error')).toBeNull();
  });

  it('refuses a product list that cannot make scopes, and keeps the one it has', async () => {
    const kept = await scopesSupported();
    expect(() => as.setProducts([])).toThrow(
      new TypeError('auth options: products must be a non-empty array'),
    );
    expect(() => as.setProducts(['ok', 'bad name'])).toThrow(
      'auth options: products[1] must be a product name of letters, digits, ".", "_" or "-", got "bad name"',
    );
    expect(await scopesSupported()).toEqual(kept);
  });
});
