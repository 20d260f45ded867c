import { gzipSync } from 'node:zlib';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  authorize,
  basic,
  discover,
  obtainTokens,
  postForm,
  type RegisteredClient,
  register,
  startServer,
  type TestServer,
} from '../../processes/auth-server.js';

describe('token endpoint attacks', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;
  let pub: RegisteredClient;
  let conf: RegisteredClient;
  let post: RegisteredClient;
  let tokenUrl: string;

  beforeAll(async () => {
    server = await startServer({ limits: { registrationsPerAddress: 1000 } });
    as = await discover(server);
    pub = await register(as, 'none');
    conf = await register(as, 'client_secret_basic');
    post = await register(as, 'client_secret_post');
    tokenUrl = as.token_endpoint!;
  });
  afterAll(() => server.close());

  /** A fresh code for `client` (S256 unless params say otherwise). */
  async function codeFor(client: RegisteredClient, params: Record<string, string | undefined> = {}) {
    const result = await authorize(server, client, params);
    const code = result.location?.searchParams.get('code');
    if (!code) throw new Error(`no code: ${result.location}`);
    return { code, verifier: result.verifier };
  }

  const exchange = (
    client: RegisteredClient,
    code: string,
    verifier: string,
    extra: Record<string, string> = {},
  ) =>
    postForm(tokenUrl, {
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: client.redirectUri,
      client_id: client.client.client_id,
      ...extra,
    });

  const refresh = (client: RegisteredClient, refreshToken: string, extra: Record<string, string> = {}) =>
    postForm(tokenUrl, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: client.client.client_id,
      ...extra,
    });

  function expectError(
    result: { status: number; json?: Record<string, unknown>; headers: Headers },
    status: number,
    error: string,
  ) {
    expect({ status: result.status, error: result.json?.error }).toEqual({ status, error });
    expect(result.headers.get('cache-control')).toBe('no-store');
  }

  describe('PKCE', () => {
    it('wrong verifier → invalid_grant, and the failed attempt neither burns the code nor revokes anything', async () => {
      const { code, verifier } = await codeFor(pub);
      expectError(await exchange(pub, code, oauth.generateRandomCodeVerifier()), 400, 'invalid_grant');
      const ok = await exchange(pub, code, verifier);
      expect(ok.status).toBe(200);
      expect(
        await server.as.verifyAccessToken(ok.json!.access_token as string, { audience: server.resource }),
      ).toBeTruthy();
    });

    it('plain challenge redeemed with a verifier whose S256 hash equals it → invalid_grant (no method confusion)', async () => {
      const verifier = oauth.generateRandomCodeVerifier();
      const challenge = await oauth.calculatePKCECodeChallenge(verifier);
      const { code } = await codeFor(pub, { code_challenge: challenge, code_challenge_method: 'plain' });
      expectError(await exchange(pub, code, verifier), 400, 'invalid_grant');
    });

    it('an absent method means plain: the challenge itself is the verifier', async () => {
      const plain = oauth.generateRandomCodeVerifier();
      const { code } = await codeFor(pub, { code_challenge: plain, code_challenge_method: undefined });
      expect((await exchange(pub, code, plain)).status).toBe(200);
    });

    it('missing code_verifier → invalid_request (a code always has a challenge: no downgrade)', async () => {
      const { code } = await codeFor(pub);
      const result = await postForm(tokenUrl, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: pub.redirectUri,
        client_id: pub.client.client_id,
      });
      expectError(result, 400, 'invalid_request');
    });

    it.each([
      ['42 characters', 'a'.repeat(42)],
      ['129 characters', 'a'.repeat(129)],
      ['a "+" and "="', `${'a'.repeat(42)}+=`],
    ])('verifier with %s → invalid_request', async (_name, verifier) => {
      const { code } = await codeFor(pub);
      expectError(await exchange(pub, code, verifier), 400, 'invalid_request');
    });

    it('confidential clients are held to PKCE too: a request without a challenge yields no code', async () => {
      const result = await authorize(server, conf, {
        code_challenge: undefined,
        code_challenge_method: undefined,
      });
      expect(result.location!.searchParams.get('error')).toBe('invalid_request');
      expect(result.location!.searchParams.get('code')).toBeNull();
    });
  });

  describe('authorization code', () => {
    it('replay → invalid_grant, and every token issued from the code stops working', async () => {
      const { code, verifier } = await codeFor(pub);
      const first = await exchange(pub, code, verifier);
      expect(first.status).toBe(200);
      expectError(await exchange(pub, code, verifier), 400, 'invalid_grant');
      await expect(
        server.as.verifyAccessToken(first.json!.access_token as string, { audience: server.resource }),
      ).rejects.toMatchObject({ code: 'invalid_token' });
      expectError(await refresh(pub, first.json!.refresh_token as string), 400, 'invalid_grant');
    });

    it('10 parallel redemptions of one code: at most one gets tokens, and the replays revoke them', async () => {
      const { code, verifier } = await codeFor(pub);
      const results = await Promise.all(Array.from({ length: 10 }, () => exchange(pub, code, verifier)));
      // The code is consumed exactly once; every other attempt is a replay, refused, and (RFC 6749 §4.1.2) revokes
      // what the code produced — so whether the winner's 200 goes out before a replay revokes it depends on timing.
      const issued = results.filter((r) => r.status === 200);
      expect(issued.length).toBeLessThanOrEqual(1);
      expect(results.filter((r) => r.status === 400 && r.json!.error === 'invalid_grant')).toHaveLength(
        10 - issued.length,
      );
      for (const r of issued) {
        await expect(
          server.as.verifyAccessToken(r.json!.access_token as string, { audience: server.resource }),
        ).rejects.toMatchObject({ code: 'invalid_token' });
      }
    });

    it('a code issued to one client is refused to another confidential client and another public client', async () => {
      const { code, verifier } = await codeFor(pub);
      const byConf = await postForm(
        tokenUrl,
        { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: pub.redirectUri },
        { Authorization: basic(conf.client.client_id, conf.secret!) },
      );
      expectError(byConf, 400, 'invalid_grant');
      const otherPublic = await register(as, 'none');
      expectError(await exchange(otherPublic, code, verifier), 400, 'invalid_grant');
      expect((await exchange(pub, code, verifier)).status).toBe(200); // not burnt by the attempts
    });

    it('an expired code → invalid_grant', async () => {
      const { code, verifier } = await codeFor(pub);
      server.advance(61);
      try {
        expectError(await exchange(pub, code, verifier), 400, 'invalid_grant');
      } finally {
        server.advance(-61);
      }
    });

    it('redirect_uri differing from the authorization request → invalid_grant; omitting it is accepted', async () => {
      const { code, verifier } = await codeFor(pub);
      expectError(
        await exchange(pub, code, verifier, { redirect_uri: 'http://127.0.0.1:43210/other' }),
        400,
        'invalid_grant',
      );
      const omitted = await postForm(tokenUrl, {
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: pub.client.client_id,
      });
      expect(omitted.status).toBe(200);
    });

    it('a resource other than the authorized one → invalid_target', async () => {
      const { code, verifier } = await codeFor(pub);
      expectError(
        await exchange(pub, code, verifier, { resource: 'https://evil.example/mcp' }),
        400,
        'invalid_target',
      );
    });
  });

  describe('refresh tokens', () => {
    it('reuse of a rotated refresh token revokes the whole family', async () => {
      const { tokens } = await obtainTokens(server, as, pub);
      const rotated = await refresh(pub, tokens.refresh_token!);
      expect(rotated.status).toBe(200);
      expectError(await refresh(pub, tokens.refresh_token!), 400, 'invalid_grant');
      expectError(await refresh(pub, rotated.json!.refresh_token as string), 400, 'invalid_grant');
      for (const at of [tokens.access_token, rotated.json!.access_token as string]) {
        await expect(server.as.verifyAccessToken(at, { audience: server.resource })).rejects.toMatchObject({
          code: 'invalid_token',
        });
      }
    });

    it('a refresh token presented by another client → invalid_grant', async () => {
      const { tokens } = await obtainTokens(server, as, pub);
      const byConf = await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: tokens.refresh_token! },
        { Authorization: basic(conf.client.client_id, conf.secret!) },
      );
      expectError(byConf, 400, 'invalid_grant');
      expect((await refresh(pub, tokens.refresh_token!)).status).toBe(200); // still the owner's
    });

    it('scope can narrow but never widen', async () => {
      const { tokens } = await obtainTokens(server, as, pub, { scope: 'read:courses-work' });
      expectError(
        await refresh(pub, tokens.refresh_token!, { scope: 'read:courses-work write:courses-work' }),
        400,
        'invalid_scope',
      );
      const { tokens: wide } = await obtainTokens(server, as, pub);
      const narrow = await refresh(pub, wide.refresh_token!, { scope: 'read:courses-work' });
      expect(narrow.status).toBe(200);
      expect(narrow.json!.scope).toBe('read:courses-work');
      // the rotated refresh token keeps the full grant
      const back = await refresh(pub, narrow.json!.refresh_token as string);
      expect(back.json!.scope).toBe('read:courses-work write:courses-work');
    });

    it('a client registered without refresh_token gets no refresh token and cannot use the grant', async () => {
      const codeOnly = await register(as, 'none', { grant_types: ['authorization_code'] });
      const { code, verifier } = await codeFor(codeOnly);
      const result = await exchange(codeOnly, code, verifier);
      expect(result.status).toBe(200);
      expect(result.json!.refresh_token).toBeUndefined();
      expectError(await refresh(codeOnly, 'anything'), 400, 'unauthorized_client');
    });
  });

  describe('client authentication', () => {
    it('Basic with a wrong secret → 401 invalid_client with a Basic challenge', async () => {
      const result = await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { Authorization: basic(conf.client.client_id, 'wrong') },
      );
      expectError(result, 401, 'invalid_client');
      expect(result.headers.get('www-authenticate')).toBe(
        `Basic realm="${server.issuer}", error="invalid_client"`,
      );
    });

    it('client_secret_post with a wrong secret → 401 invalid_client', async () => {
      const result = await refresh(post, 'x', { client_secret: 'wrong' });
      expectError(result, 401, 'invalid_client');
    });

    it('Basic and a body client_secret together → 400 invalid_request', async () => {
      const result = await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: 'x', client_secret: conf.secret! },
        { Authorization: basic(conf.client.client_id, conf.secret!) },
      );
      expectError(result, 400, 'invalid_request');
    });

    it('an unknown client_id → 401 invalid_client', async () => {
      expectError(
        await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'x', client_id: 'nobody' }),
        401,
        'invalid_client',
      );
    });

    it('a confidential client presenting only its client_id → 401 invalid_client', async () => {
      expectError(await refresh(conf, 'x'), 401, 'invalid_client');
    });

    it('a client using another method than registered (post for a basic client) → 401 invalid_client', async () => {
      expectError(await refresh(conf, 'x', { client_secret: conf.secret! }), 401, 'invalid_client');
    });

    it('no client authentication at all → 401 invalid_client', async () => {
      expectError(
        await postForm(tokenUrl, { grant_type: 'refresh_token', refresh_token: 'x' }),
        401,
        'invalid_client',
      );
    });

    it('a malformed Basic header → 400 invalid_request', async () => {
      const result = await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { Authorization: 'Basic !!!' },
      );
      expectError(result, 400, 'invalid_request');
    });

    it('repeated failures lock the client out with 429, even with the right secret', async () => {
      const victim = await register(as, 'client_secret_basic');
      for (let i = 0; i < 10; i++) {
        const r = await postForm(
          tokenUrl,
          { grant_type: 'refresh_token', refresh_token: 'x' },
          { Authorization: basic(victim.client.client_id, `wrong${i}`) },
        );
        expect(r.status).toBe(401);
      }
      const locked = await postForm(
        tokenUrl,
        { grant_type: 'refresh_token', refresh_token: 'x' },
        { Authorization: basic(victim.client.client_id, victim.secret!) },
      );
      expectError(locked, 429, 'temporarily_unavailable');
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  });

  describe('request parsing', () => {
    it('an unsupported grant_type → unsupported_grant_type', async () => {
      expectError(
        await postForm(tokenUrl, { grant_type: 'password', client_id: pub.client.client_id }),
        400,
        'unsupported_grant_type',
      );
    });

    it('a repeated grant_type → invalid_request', async () => {
      const body = `grant_type=authorization_code&grant_type=refresh_token&client_id=${pub.client.client_id}`;
      expectError(await postForm(tokenUrl, body), 400, 'invalid_request');
    });

    it('structured parameters (code[]=, code.a=) are not the parameter → invalid_request', async () => {
      const body = `grant_type=authorization_code&code[]=x&code.a=y&code_verifier=${'a'.repeat(43)}&client_id=${pub.client.client_id}`;
      const result = await postForm(tokenUrl, body);
      expectError(result, 400, 'invalid_request');
      expect(result.json!.error_description).toBe('code is required');
    });

    it('a 1 MB body → 413 invalid_request', async () => {
      const result = await postForm(tokenUrl, `grant_type=refresh_token&pad=${'a'.repeat(1024 * 1024)}`);
      expectError(result, 413, 'invalid_request');
    });

    it('a JSON body → 400 invalid_request', async () => {
      const result = await postForm(tokenUrl, JSON.stringify({ grant_type: 'refresh_token' }), {
        'Content-Type': 'application/json',
      });
      expectError(result, 400, 'invalid_request');
    });

    it('malformed percent-encoding → 400 invalid_request', async () => {
      expectError(
        await postForm(tokenUrl, 'grant_type=refresh_token&refresh_token=%zz'),
        400,
        'invalid_request',
      );
    });

    it('bytes that are not UTF-8 → 400 invalid_request', async () => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: Buffer.from([0x67, 0x72, 0x61, 0x6e, 0x74, 0x5f, 0x74, 0x79, 0x70, 0x65, 0x3d, 0xff, 0xfe]),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    });

    it('a gzip-encoded body (decompression bomb vector) → 400 invalid_request', async () => {
      const response = await fetch(tokenUrl, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Encoding': 'gzip' },
        body: gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x61)),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
    });

    it('GET on the token endpoint → 405 with Allow: POST', async () => {
      const response = await fetch(tokenUrl);
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    });

    it('neither grant_type nor token → 400 invalid_request', async () => {
      expectError(await postForm(tokenUrl, { client_id: pub.client.client_id }), 400, 'invalid_request');
    });
  });

  describe('revocation at the token URL', () => {
    it('unknown or garbage tokens → 200', async () => {
      const result = await postForm(tokenUrl, { token: 'garbage', client_id: pub.client.client_id });
      expect(result.status).toBe(200);
    });

    it("another client's refresh token → 200 and the token keeps working", async () => {
      const { tokens } = await obtainTokens(server, as, pub);
      const result = await postForm(
        tokenUrl,
        { token: tokens.refresh_token! },
        { Authorization: basic(conf.client.client_id, conf.secret!) },
      );
      expect(result.status).toBe(200);
      expect((await refresh(pub, tokens.refresh_token!)).status).toBe(200);
    });

    it('a wrong token_type_hint still finds and revokes the refresh token', async () => {
      const { tokens } = await obtainTokens(server, as, pub);
      const result = await postForm(tokenUrl, {
        token: tokens.refresh_token!,
        token_type_hint: 'access_token',
        client_id: pub.client.client_id,
      });
      expect(result.status).toBe(200);
      expectError(await refresh(pub, tokens.refresh_token!), 400, 'invalid_grant');
    });

    it('grant_type present → a token request even with a token parameter', async () => {
      const result = await postForm(tokenUrl, {
        grant_type: 'refresh_token',
        token: 'x',
        client_id: pub.client.client_id,
      });
      expectError(result, 400, 'invalid_request');
      expect(result.json!.error_description).toBe('refresh_token is required');
    });

    it('revocation requires client authentication like the token endpoint', async () => {
      const result = await postForm(
        tokenUrl,
        { token: 'x' },
        { Authorization: basic(conf.client.client_id, 'wrong') },
      );
      expectError(result, 401, 'invalid_client');
    });
  });
});
