import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import type * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discover,
  insecure,
  obtainTokens,
  type RegisteredClient,
  register,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('forged and misused access tokens', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let pub: RegisteredClient;
  let token: string;

  beforeAll(async () => {
    server = await startServer();
    as = await discover(server);
    pub = await register(as, 'none');
    ({
      tokens: { access_token: token },
    } = await obtainTokens(server, as, pub));
  });
  afterAll(() => server.close());

  const verify = (t: string, requiredScopes?: string[]) =>
    server.as.verifyAccessToken(t, {
      audience: server.resource,
      ...(requiredScopes ? { requiredScopes } : {}),
    });
  const expectInvalid = (t: string) =>
    expect(verify(t)).rejects.toMatchObject({ code: 'invalid_token', status: 401 });

  it('accepts the genuine token (baseline), with or without a trailing slash on the audience', async () => {
    await expect(verify(token)).resolves.toMatchObject({ client_id: pub.client.client_id });
    await expect(
      server.as.verifyAccessToken(token, { audience: `${server.resource}/` }),
    ).resolves.toBeTruthy();
  });

  it.each(['none', 'NONE', 'nOnE'])('refuses alg "%s" with the signature dropped', async (alg) => {
    const [, payload] = token.split('.');
    await expectInvalid(`${b64({ alg, typ: 'at+jwt' })}.${payload}.`);
  });

  it('refuses HS256 signed with the public key as the HMAC secret (and never throws a TypeError)', async () => {
    const jwks = (await (await fetch(as.jwks_uri!)).json()) as { keys: Record<string, unknown>[] };
    const claims = decodeJwt(token);
    const { kid } = decodeProtectedHeader(token);
    for (const secret of [JSON.stringify(jwks.keys[0]), String(jwks.keys[0]!.x)]) {
      const forged = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' })
        .sign(new TextEncoder().encode(secret));
      await expectInvalid(forged);
    }
  });

  it('refuses a token signed by an attacker key, whether announced by kid, embedded jwk or jku', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const claims = decodeJwt(token);
    const headers = [
      { alg: 'ES256', typ: 'at+jwt', kid: 'attacker' },
      { alg: 'ES256', typ: 'at+jwt', kid: decodeProtectedHeader(token).kid, jwk: await exportJWK(publicKey) },
      { alg: 'ES256', typ: 'at+jwt', jku: 'https://evil.example/jwks' },
    ];
    for (const header of headers)
      await expectInvalid(await new SignJWT(claims).setProtectedHeader(header).sign(privateKey));
  });

  it('refuses our own token for another audience', async () => {
    const other = await server.as.mintServiceToken({
      subject: 'alice',
      audience: 'https://other.example/mcp',
      scope: [],
    });
    await expectInvalid(other);
  });

  it('refuses a token whose signature does not match tampered claims (wrong iss / typ / scope)', async () => {
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    await expectInvalid(`${header}.${b64({ ...claims, iss: 'https://evil.example' })}.${signature}`);
    await expectInvalid(`${b64({ ...decodeProtectedHeader(token), typ: 'JWT' })}.${payload}.${signature}`);
    await expectInvalid(`${header}.${b64({ ...claims, scope: 'write:grades-work' })}.${signature}`);
  });

  it('refuses an expired token', async () => {
    server.advance(3600 + 10);
    try {
      await expectInvalid(token);
    } finally {
      server.advance(-3610);
    }
  });

  it('refuses garbage', async () => {
    for (const junk of ['', 'a.b.c', 'not-a-jwt', `${'x'.repeat(50)}.${'y'.repeat(50)}.`])
      await expectInvalid(junk);
  });

  it('reports a missing scope as insufficient_scope (403)', async () => {
    await expect(verify(token, ['write:grades-work'])).rejects.toMatchObject({
      code: 'insufficient_scope',
      status: 403,
    });
    await expect(verify(token, ['read:courses-work'])).resolves.toBeTruthy();
  });
});

describe('dynamic client registration', () => {
  let server: TestServer;
  let registrationUrl: string;

  beforeAll(async () => {
    server = await startServer({ limits: { registrationsPerAddress: 30 } });
    registrationUrl = `${server.issuer}/v1/register`;
  });
  afterAll(() => server.close());

  const registerRaw = async (body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(registrationUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return {
      status: response.status,
      headers: response.headers,
      json: (await response.json()) as Record<string, unknown>,
    };
  };

  it.each([
    ['http on a public host', { redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
    ['javascript: URI', { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
    ['fragment', { redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
    ['empty list', { redirect_uris: [] }, 'invalid_redirect_uri'],
    ['relative URI', { redirect_uris: ['/cb'] }, 'invalid_redirect_uri'],
    [
      'private_key_jwt',
      { redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
    ],
    [
      'password grant',
      { redirect_uris: ['https://a.example/cb'], grant_types: ['password'] },
      'invalid_client_metadata',
    ],
    [
      'token response type',
      { redirect_uris: ['https://a.example/cb'], response_types: ['token'] },
      'invalid_client_metadata',
    ],
    ['unknown scope', { redirect_uris: ['https://a.example/cb'], scope: 'admin' }, 'invalid_client_metadata'],
    ['not an object', '[1,2]', 'invalid_client_metadata'],
    ['invalid JSON', '{"redirect_uris":', 'invalid_client_metadata'],
  ])('refuses %s', async (_name, body, error) => {
    const result = await registerRaw(body);
    expect({ status: result.status, error: result.json.error }).toEqual({ status: 400, error });
  });

  it('refuses huge metadata with 413', async () => {
    const result = await registerRaw({
      redirect_uris: ['https://a.example/cb'],
      client_name: 'x'.repeat(100_000),
    });
    expect({ status: result.status, error: result.json.error }).toEqual({
      status: 413,
      error: 'invalid_request',
    });
  });

  it('defaults to client_secret_basic (RFC 7591) and returns 201, no-store and the secret once', async () => {
    const result = await registerRaw({ redirect_uris: ['https://a.example/cb'], unknown_field: 'dropped' });
    expect(result.status).toBe(201);
    expect(result.headers.get('cache-control')).toBe('no-store');
    expect(result.json).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      client_secret_expires_at: 0,
    });
    expect(typeof result.json.client_secret).toBe('string');
    expect(result.json.unknown_field).toBeUndefined();
  });

  it('supports RFC 7592 read, update and delete with the registration access token', async () => {
    const created = await registerRaw({
      redirect_uris: ['https://a.example/cb'],
      token_endpoint_auth_method: 'none',
    });
    const uri = created.json.registration_client_uri as string;
    const auth = { Authorization: `Bearer ${created.json.registration_access_token}` };
    expect(uri).toBe(`${registrationUrl}/${created.json.client_id}`);

    const read = await fetch(uri, { headers: auth });
    expect(read.status).toBe(200);
    const readBody = (await read.json()) as Record<string, unknown>;
    expect(readBody.redirect_uris).toEqual(['https://a.example/cb']);
    expect(readBody.client_secret).toBeUndefined();

    const wrong = await fetch(uri, { headers: { Authorization: 'Bearer wrong' } });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: string }).error).toBe('invalid_token');

    const update = await fetch(uri, {
      method: 'PUT',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_id: created.json.client_id,
        redirect_uris: ['https://b.example/cb'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(update.status).toBe(200);
    expect(((await update.json()) as { redirect_uris: string[] }).redirect_uris).toEqual([
      'https://b.example/cb',
    ]);

    const del = await fetch(uri, { method: 'DELETE', headers: auth });
    expect(del.status).toBe(204);
    expect((await fetch(uri, { headers: auth })).status).toBe(401);
  });

  it('limits registrations per address with 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++)
      statuses.push((await registerRaw({ redirect_uris: ['https://a.example/cb'] })).status);
    const limited = await registerRaw({ redirect_uris: ['https://a.example/cb'] });
    expect(limited.status).toBe(429);
    expect(limited.json.error).toBe('temporarily_unavailable');
    // Set for the world and not for loopback, the limit is the loopback one too; the answer says how to raise it.
    expect(limited.json.error_description).toBe(
      'too many registrations from this address (30 per 3600 s); retry later, or raise auth.limits.registrationsPerLoopbackAddress in the gateway configuration',
    );
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(30);
  });

  it('answers CORS preflights on client-facing endpoints but not on the authorization endpoint', async () => {
    const preflight = await fetch(registrationUrl, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    const authorizePreflight = await fetch(`${server.url}/v1/authorize`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example' },
    });
    expect(authorizePreflight.headers.get('access-control-allow-origin')).toBeNull();
    void insecure;
  });
});

describe('registration limits by default: the world and this machine', () => {
  // The address the limits key on, as a proxy in front would have determined it (a test header here).
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ clientAddress: (ctx) => ctx.get('x-test-client-address') || '127.0.0.1' });
  });
  afterAll(() => server.close());

  const registerFrom = async (address: string) => {
    const response = await fetch(`${server.issuer}/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-test-client-address': address },
      body: JSON.stringify({ redirect_uris: ['https://a.example/cb'], token_endpoint_auth_method: 'none' }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  it('allows 20 an hour from an address of the world, 200 from a loopback one, and says which setting raises each', async () => {
    for (let i = 0; i < 20; i++) expect((await registerFrom('203.0.113.7')).status).toBe(201);
    const world = await registerFrom('203.0.113.7');
    expect(world.status).toBe(429);
    expect(world.json.error_description).toBe(
      'too many registrations from this address (20 per 3600 s); retry later, or raise auth.limits.registrationsPerAddress in the gateway configuration',
    );
    for (const loopback of ['127.0.0.1', '::1', '::ffff:127.0.0.5'])
      for (let i = 0; i < 25; i++) expect((await registerFrom(loopback)).status).toBe(201);
    for (let i = 25; i < 200; i++) expect((await registerFrom('127.0.0.1')).status).toBe(201);
    const local = await registerFrom('127.0.0.1');
    expect(local.status).toBe(429);
    expect(local.json.error_description).toContain('auth.limits.registrationsPerLoopbackAddress');
  });
});
