import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Browser,
  discover,
  errorCodeOf,
  parseForm,
  register,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

/**
 * A scripted upstream provider on a loopback port whose token endpoint returns whatever ID token the test
 * forges (a real provider never issues one for another audience or signed by another key): each must be
 * refused at our callback with a page, never a redirect, and nobody is signed in.
 */

let upstream: Server;
let upstreamUrl: string;
let server: TestServer;
/** Signs with the provider's published key, or with a key it does not publish. */
let forge: (claims: JWTPayload) => Promise<string>;
let forgeWithForeignKey: (claims: JWTPayload) => Promise<string>;
let lastNonce = '';

async function startUpstream(): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const foreign = (await generateKeyPair('ES256')).privateKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const sign = (claims: JWTPayload, key = privateKey) =>
    new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(key);
  forge = (claims) => sign(claims);
  forgeWithForeignKey = (claims) => sign(claims, foreign);
  upstream = createServer(async (req, res) => {
    const url = new URL(req.url!, upstreamUrl);
    const json = (body: unknown) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      return json({
        issuer: upstreamUrl,
        authorization_endpoint: `${upstreamUrl}/authorize`,
        token_endpoint: `${upstreamUrl}/token`,
        jwks_uri: `${upstreamUrl}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['ES256'],
        authorization_response_iss_parameter_supported: true,
      });
    }
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/authorize') {
      lastNonce = url.searchParams.get('nonce')!;
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.search = new URLSearchParams({
        code: 'upstream-code',
        state: url.searchParams.get('state')!,
        iss: upstreamUrl,
      }).toString();
      res.statusCode = 302;
      res.setHeader('Location', back.href);
      return res.end();
    }
    if (url.pathname === '/token' && tokenError) {
      res.statusCode = 400;
      return json({ error: tokenError, error_description: 'the code was already used' });
    }
    if (url.pathname === '/token') {
      const now = Math.floor(Date.now() / 1000);
      const claims = {
        iss: upstreamUrl,
        aud: 'portcullis',
        sub: 'mallory',
        iat: now,
        exp: now + 300,
        nonce: lastNonce,
      };
      return json({
        access_token: 'at',
        token_type: 'Bearer',
        expires_in: 300,
        id_token: await nextIdToken(claims),
      });
    }
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
}

let nextIdToken: (claims: JWTPayload) => Promise<string>;
/** When set, the token endpoint answers with this OAuth error instead of tokens. */
let tokenError: string | undefined;

beforeAll(async () => {
  await startUpstream();
  server = await startServer({
    cookieSecure: false,
    identityProvider: {
      issuer: upstreamUrl,
      clientId: 'portcullis',
      clientSecret: 'secret',
      name: 'Scripted',
    },
  });
});

afterAll(async () => {
  await server?.close();
  upstream?.closeAllConnections();
  await new Promise((resolve) => upstream?.close(resolve));
});

/** Our client's request, the provider button, the provider's redirect back; returns our callback's response. */
async function signInWith(
  idToken: (claims: JWTPayload) => Promise<string>,
  target = server,
): Promise<Response> {
  nextIdToken = idToken;
  const as = await discover(target);
  const registered = await register(as, 'none');
  const browser = new Browser();
  const url = new URL(`${target.url}/v1/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: registered.client.client_id,
    redirect_uri: registered.redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
    code_challenge_method: 'S256',
    state: 'client-state',
  }).toString();
  const html = await (await browser.fetch(url.href)).text();
  const { fields } = parseForm(html);
  const go = await browser.fetch(`${target.url}/v1/authorize/upstream`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
  });
  if (go.status !== 303) return go;
  const back = await fetch(go.headers.get('location')!, { redirect: 'manual' });
  return browser.fetch(back.headers.get('location')!);
}

async function expectRefused(response: Response): Promise<string> {
  expect(response.status).toBe(400);
  expect(response.headers.get('location')).toBeNull();
  const html = await response.text();
  expect(errorCodeOf(html)).toBe('access_denied');
  expect(html).not.toContain('name="decision"');
  return html;
}

describe('forged upstream ID tokens', () => {
  it('accepts the scripted provider when its ID token is right (the control case)', async () => {
    const response = await signInWith((claims) => forge(claims));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('Signed in as <strong>oidc|mallory</strong>');
  });

  it('refuses an ID token for another audience', async () => {
    await expectRefused(await signInWith((claims) => forge({ ...claims, aud: 'another-client' })));
  });

  it('refuses an ID token with another nonce', async () => {
    await expectRefused(await signInWith((claims) => forge({ ...claims, nonce: 'replayed-from-elsewhere' })));
  });

  it('refuses an ID token from another issuer', async () => {
    await expectRefused(await signInWith((claims) => forge({ ...claims, iss: 'https://evil.example.com' })));
  });

  it('refuses an expired ID token', async () => {
    const past = Math.floor(Date.now() / 1000) - 3600;
    await expectRefused(await signInWith((claims) => forge({ ...claims, iat: past - 300, exp: past })));
  });

  it('refuses an ID token signed by a key the provider does not publish', async () => {
    const html = await expectRefused(await signInWith((claims) => forgeWithForeignKey(claims)));
    expect(html).toContain('was refused');
  });

  it("shows the token endpoint's refusal", async () => {
    tokenError = 'invalid_grant';
    try {
      const html = await expectRefused(await signInWith((claims) => forge(claims)));
      expect(html).toContain('Scripted did not confirm the sign-in (invalid_grant)');
    } finally {
      tokenError = undefined;
    }
  });

  it('shows a 502 page when the provider cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const offline = await startServer({
      cookieSecure: false,
      identityProvider: {
        issuer: `http://127.0.0.1:${port}`,
        clientId: 'c',
        clientSecret: 's',
        timeoutMs: 2000,
      },
    });
    try {
      const response = await signInWith((claims) => forge(claims), offline);
      expect(response.status).toBe(502);
      expect(response.headers.get('location')).toBeNull();
      const html = await response.text();
      expect(errorCodeOf(html)).toBe('temporarily_unavailable');
      expect(html).toContain(`127.0.0.1:${port} cannot be reached right now`);
    } finally {
      await offline.close();
    }
  });
});
