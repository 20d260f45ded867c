import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DocumentHost, startDocumentHost } from '../../doubles/document-host.js';
import { refreshTokens } from '../../doubles/oauth-client.js';
import {
  authorize,
  Browser,
  discover,
  errorCodeOf,
  insecure,
  obtainTokens,
  parseForm,
  type RegisteredClient,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): an https client_id URL names the
 * client's metadata, fetched from a real HTTPS host on loopback (allowed here by allowedNetworks, as in development).
 */

const REDIRECT = 'http://127.0.0.1:43210/callback';

function document(url: string, extra: Record<string, unknown> = {}) {
  return {
    client_id: url,
    client_name: 'Document Client',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...extra,
  };
}

function documentClient(clientId: string): RegisteredClient {
  return {
    client: { client_id: clientId, token_endpoint_auth_method: 'none' },
    auth: oauth.None(),
    redirectUri: REDIRECT,
    registration: {},
  };
}

/** The error page an authorization request with this client_id gets. */
async function refusal(
  server: TestServer,
  clientId: string,
): Promise<{ status: number; code?: string; text: string }> {
  const url = new URL(`${server.url}/v1/authorize`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 's',
  }).toString();
  const response = await new Browser().fetch(url.href);
  const html = await response.text();
  const text = /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1] ?? html;
  return { status: response.status, code: errorCodeOf(html), text: text.replace(/&#39;|&quot;/g, "'") };
}

describe('client metadata documents', () => {
  let host: DocumentHost;
  let server: TestServer;

  beforeAll(async () => {
    host = await startDocumentHost();
    server = await startServer({
      clientMetadataDocuments: {
        allowedNetworks: ['127.0.0.1/32'],
        ca: host.caPem,
        timeoutMs: 1000,
        maxBytes: 2048,
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await host?.close();
  });

  it('advertises client_id_metadata_document_supported', async () => {
    expect((await discover(server)).client_id_metadata_document_supported).toBe(true);
  });

  it('runs authorization code + PKCE → refresh for a client known only by its document', async () => {
    const url = `${host.origin}/clients/full.json`;
    host.json('/clients/full.json', document(url), { 'cache-control': 'max-age=600' });
    const as = await discover(server);
    const registered = documentClient(url);

    // The consent page names the client and the host that vouches for it.
    const browser = new Browser();
    const consent = await authorize(server, registered, {}, { browser, decision: 'deny' });
    expect(consent.location?.searchParams.get('error')).toBe('access_denied');

    const { tokens } = await obtainTokens(server, as, registered);
    expect(tokens.scope).toBe('read:courses-work write:courses-work');
    const claims = await server.as.verifyAccessToken(tokens.access_token, { audience: server.resource });
    expect(claims.client_id).toBe(url);

    const refreshed = await refreshTokens(as, registered.client, oauth.None(), tokens.refresh_token!);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    // Cached per its max-age: one fetch served the whole flow and the refresh.
    expect(host.hits('/clients/full.json')).toBe(1);
  });

  it('shows the client name and the document host on the consent page', async () => {
    const url = `${host.origin}/clients/named.json`;
    host.json('/clients/named.json', document(url, { client_name: 'Named <b>Client</b>' }));
    const browser = new Browser();
    const start = new URL(`${server.url}/v1/authorize`);
    start.search = new URLSearchParams({
      response_type: 'code',
      client_id: url,
      redirect_uri: REDIRECT,
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    }).toString();
    const login = await browser.fetch(start.href);
    const form = parseForm(await login.text());
    const afterLogin = await browser.fetch(form.action, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...form.fields,
        username: 'alice',
        password: 'correct horse battery staple',
      }),
    });
    const page = await (await browser.fetch(afterLogin.headers.get('location')!)).text();
    expect(page).toContain('<h1>Authorize Named &#60;b&#62;Client&#60;/b&#62;</h1>');
    expect(page).toContain(`identified by <code>${new URL(host.origin).host}</code>`);
  });

  it('keeps a document per its Cache-Control: max-age until it is stale, no-store not at all', async () => {
    const cachedUrl = `${host.origin}/clients/cached.json`;
    host.json('/clients/cached.json', document(cachedUrl), { 'cache-control': 'public, max-age=60' });
    await refusal(server, cachedUrl);
    await refusal(server, cachedUrl);
    expect(host.hits('/clients/cached.json')).toBe(1);
    server.advance(61);
    await refusal(server, cachedUrl);
    expect(host.hits('/clients/cached.json')).toBe(2);

    const uncachedUrl = `${host.origin}/clients/uncached.json`;
    host.json('/clients/uncached.json', document(uncachedUrl), { 'cache-control': 'no-store' });
    await refusal(server, uncachedUrl);
    await refusal(server, uncachedUrl);
    expect(host.hits('/clients/uncached.json')).toBe(2);
  });

  const refusals: [string, (url: string) => void, RegExp][] = [
    [
      'a redirect',
      (url) =>
        host.serve(new URL(url).pathname, (_q, r) =>
          r.writeHead(302, { location: '/clients/full.json' }).end(),
        ),
      /answered 302 \(a redirect\); redirects are not followed/,
    ],
    [
      'a document over the size limit (declared)',
      (url) =>
        host.json(
          new URL(url).pathname,
          document(url, { client_uri: `https://x.example/${'a'.repeat(3000)}` }),
        ),
      /larger than 2048 bytes/,
    ],
    [
      'a document over the size limit (streamed without a length)',
      (url) =>
        host.serve(new URL(url).pathname, (_q, r) => {
          r.writeHead(200, { 'content-type': 'application/json' });
          r.write(`{"client_id":"${url}","x":"`);
          r.end(`${'a'.repeat(4000)}"}`);
        }),
      /larger than 2048 bytes/,
    ],
    [
      'a host too slow to answer',
      (url) => host.serve(new URL(url).pathname, () => {}),
      /did not answer within 1000 ms/,
    ],
    [
      'a client_id that differs from the URL',
      (url) => host.json(new URL(url).pathname, document(`${url}x`)),
      /the document's client_id must equal its URL/,
    ],
    [
      'a redirect URI that is neither https nor loopback',
      (url) => host.json(new URL(url).pathname, document(url, { redirect_uris: ['http://evil.example/cb'] })),
      /redirect_uris\[0\] must use https, or http on 127.0.0.1/,
    ],
    [
      'a client secret',
      (url) => host.json(new URL(url).pathname, document(url, { client_secret: 'shh' })),
      /must not contain client_secret/,
    ],
    [
      'a shared-secret authentication method',
      (url) =>
        host.json(
          new URL(url).pathname,
          document(url, { token_endpoint_auth_method: 'client_secret_basic' }),
        ),
      /must not use a shared secret, got 'client_secret_basic'/,
    ],
    [
      'not JSON',
      (url) =>
        host.serve(new URL(url).pathname, (_q, r) =>
          r.writeHead(200, { 'content-type': 'application/json' }).end('<html>'),
        ),
      /the document is not JSON/,
    ],
    [
      'another content type',
      (url) =>
        host.serve(new URL(url).pathname, (_q, r) =>
          r.writeHead(200, { 'content-type': 'text/html' }).end('{}'),
        ),
      /the content type must be application\/json/,
    ],
    ['a 404', () => {}, /answered HTTP 404, not 200/],
  ];

  it.each(refusals)('refuses %s with invalid_client on the error page', async (_name, setUp, message) => {
    const url = `${host.origin}/refused/${Math.random().toString(36).slice(2)}.json`;
    setUp(url);
    const page = await refusal(server, url);
    expect(page).toMatchObject({ status: 400, code: 'invalid_client' });
    expect(page.text).toMatch(message);
  });

  it.each([
    [
      'an http URL',
      (origin: string) => `${origin.replace('https:', 'http:')}/clients/full.json`,
      /must use https/,
    ],
    ['no path', (origin: string) => `${origin}/`, /must have a path/],
    [
      'a dot segment',
      (origin: string) => `${origin}/clients/../clients/full.json`,
      /"\." or "\.\." path segments|'\.' or '\.\.' path segments/,
    ],
    ['a fragment', (origin: string) => `${origin}/clients/full.json#x`, /must not have a fragment/],
    [
      'user information',
      (origin: string) => origin.replace('https://', 'https://me@') + '/c.json',
      /user information/,
    ],
  ])('refuses a client_id URL with %s before fetching anything', async (_name, make, message) => {
    const before = host.hits('/clients/full.json');
    const page = await refusal(server, make(host.origin));
    expect(page).toMatchObject({ status: 400, code: 'invalid_client' });
    expect(page.text).toMatch(message);
    expect(host.hits('/clients/full.json')).toBe(before);
  });

  it('refuses a document client at the token endpoint once its document is gone', async () => {
    const url = `${host.origin}/clients/gone.json`;
    host.json('/clients/gone.json', document(url), { 'cache-control': 'no-store' });
    const as = await discover(server);
    const registered = documentClient(url);
    const { tokens } = await obtainTokens(server, as, registered);
    host.serve('/clients/gone.json', (_q, r) => r.writeHead(404).end());
    const response = await oauth.refreshTokenGrantRequest(
      as,
      registered.client,
      oauth.None(),
      tokens.refresh_token!,
      insecure,
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('client metadata documents without a development allowance', () => {
  let host: DocumentHost;
  let server: TestServer;

  beforeAll(async () => {
    host = await startDocumentHost();
    server = await startServer({ clientMetadataDocuments: { ca: host.caPem } });
  });
  afterAll(async () => {
    await server?.close();
    await host?.close();
  });

  it.each([
    [
      'a loopback address literal',
      (port: string) => `https://127.0.0.1:${port}/c.json`,
      /host 127\.0\.0\.1 is not a public address/,
    ],
    [
      'an IPv4-mapped IPv6 literal',
      (port: string) => `https://[::ffff:127.0.0.1]:${port}/c.json`,
      /is not a public address/,
    ],
    [
      'a private address literal',
      () => 'https://10.1.2.3/c.json',
      /host 10\.1\.2\.3 is not a public address/,
    ],
    [
      'a link-local address (cloud metadata)',
      () => 'https://169.254.169.254/c.json',
      /is not a public address/,
    ],
    [
      'a name that resolves to loopback',
      (port: string) => `https://localhost:${port}/c.json`,
      /the host localhost resolves to (127\.0\.0\.1|::1), which is not a public address/,
    ],
  ])('refuses %s without connecting', async (_name, make, message) => {
    const url = make(new URL(host.origin).port);
    host.json('/c.json', document(url));
    const page = await refusal(server, url);
    expect(page).toMatchObject({ status: 400, code: 'invalid_client' });
    expect(page.text).toMatch(message);
    expect(host.hits('/c.json')).toBe(0);
  });
});

describe('client metadata documents disabled', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ clientMetadataDocuments: { enabled: false } });
  });
  afterAll(() => server?.close());

  it('neither advertises nor accepts them', async () => {
    expect((await discover(server)).client_id_metadata_document_supported).toBeUndefined();
    const page = await refusal(server, 'https://client.example/doc.json');
    expect(page).toMatchObject({ status: 400, code: 'invalid_client' });
    expect(page.text).toMatch(/does not accept client metadata documents/);
  });
});
