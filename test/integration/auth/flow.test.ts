import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshTokens } from '../../doubles/oauth-client.js';
import {
  discover,
  insecure,
  obtainTokens,
  register,
  startServer,
  type TestServer,
  USER,
} from '../../processes/auth-server.js';

describe('OAuth flow driven by oauth4webapi', () => {
  let server: TestServer;
  let as: oauth.AuthorizationServer;

  beforeAll(async () => {
    server = await startServer();
    as = await discover(server);
  });
  afterAll(() => server.close());

  it('discovers the metadata of spec §2.1', () => {
    expect(as).toMatchObject({
      issuer: server.issuer,
      authorization_endpoint: `${server.url}/v1/authorize`,
      token_endpoint: `${server.issuer}/v1/token`,
      registration_endpoint: `${server.issuer}/v1/register`,
      revocation_endpoint: `${server.issuer}/v1/token`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256', 'plain'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['read:courses-work', 'write:courses-work', 'read:grades-work', 'write:grades-work'],
    });
  });

  for (const method of ['none', 'client_secret_basic', 'client_secret_post'] as const) {
    it(`runs registration → authorization → exchange → refresh → revocation for ${method}`, async () => {
      const registered = await register(as, method);
      expect(registered.registration).toMatchObject({
        token_endpoint_auth_method: method,
        redirect_uris: [registered.redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        client_name: `test ${method}`,
      });
      expect(typeof registered.registration.client_id_issued_at).toBe('number');
      if (method === 'none') expect(registered.secret).toBeUndefined();
      else expect(registered.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const { tokens } = await obtainTokens(server, as, registered);
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.expires_in).toBe(3600);
      expect(tokens.scope).toBe('read:courses-work write:courses-work');
      expect(typeof tokens.refresh_token).toBe('string');

      // The access token verifies against the published JWKS, with RFC 9068 claims.
      const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
      const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
        issuer: server.issuer,
        audience: server.resource,
        typ: 'at+jwt',
      });
      expect(protectedHeader.alg).toBe('ES256');
      expect(payload).toMatchObject({
        iss: server.issuer,
        sub: USER.username,
        aud: server.resource,
        client_id: registered.client.client_id,
        scope: 'read:courses-work write:courses-work',
      });
      expect(payload.exp! - payload.iat!).toBe(3600);
      expect(typeof payload.jti).toBe('string');
      // oauth4webapi's own RFC 9068 validator agrees.
      const request = new Request(server.resource, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      const claims = await oauth.validateJwtAccessToken(as, request, server.resource, insecure);
      expect(claims.client_id).toBe(registered.client.client_id);
      await expect(
        server.as.verifyAccessToken(tokens.access_token, { audience: server.resource }),
      ).resolves.toMatchObject({
        sub: USER.username,
      });

      // Refresh (rotation): a new refresh token and access token.
      const refreshed = await refreshTokens(as, registered.client, registered.auth, tokens.refresh_token!);
      expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
      expect(refreshed.access_token).not.toBe(tokens.access_token);

      // Revocation at the token URL: the refresh token's family dies, access tokens included.
      await oauth.processRevocationResponse(
        await oauth.revocationRequest(
          as,
          registered.client,
          registered.auth,
          refreshed.refresh_token!,
          insecure,
        ),
      );
      await expect(
        server.as.verifyAccessToken(refreshed.access_token, { audience: server.resource }),
      ).rejects.toMatchObject({ code: 'invalid_token' });
      const again = await oauth.refreshTokenGrantRequest(
        as,
        registered.client,
        registered.auth,
        refreshed.refresh_token!,
        insecure,
      );
      await expect(oauth.processRefreshTokenResponse(as, registered.client, again)).rejects.toMatchObject({
        error: 'invalid_grant',
      });
    });
  }

  it('revokes a single access token so verifyAccessToken rejects it, leaving the refresh token usable', async () => {
    const registered = await register(as, 'client_secret_post');
    const { tokens } = await obtainTokens(server, as, registered);
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, registered.client, registered.auth, tokens.access_token, {
        ...insecure,
        additionalParameters: { token_type_hint: 'access_token' },
      }),
    );
    await expect(
      server.as.verifyAccessToken(tokens.access_token, { audience: server.resource }),
    ).rejects.toMatchObject({
      code: 'invalid_token',
      status: 401,
    });
    const refreshed = await refreshTokens(as, registered.client, registered.auth, tokens.refresh_token!);
    await expect(
      server.as.verifyAccessToken(refreshed.access_token, { audience: server.resource }),
    ).resolves.toBeTruthy();
  });

  it('introspects tokens for the confidential client that owns them', async () => {
    const registered = await register(as, 'client_secret_basic');
    const { tokens } = await obtainTokens(server, as, registered);
    const active = await oauth.processIntrospectionResponse(
      as,
      registered.client,
      await oauth.introspectionRequest(as, registered.client, registered.auth, tokens.access_token, insecure),
    );
    expect(active).toMatchObject({
      active: true,
      sub: USER.username,
      client_id: registered.client.client_id,
    });
    const other = await register(as, 'client_secret_basic');
    const foreign = await oauth.processIntrospectionResponse(
      as,
      other.client,
      await oauth.introspectionRequest(as, other.client, other.auth, tokens.access_token, insecure),
    );
    expect(foreign).toEqual({ active: false });
    const refresh = await oauth.processIntrospectionResponse(
      as,
      registered.client,
      await oauth.introspectionRequest(
        as,
        registered.client,
        registered.auth,
        tokens.refresh_token!,
        insecure,
      ),
    );
    expect(refresh).toMatchObject({
      active: true,
      token_type: 'refresh_token',
      scope: 'read:courses-work write:courses-work',
    });
  });

  it('mints service tokens that verify through the JWKS and rotates keys without breaking live tokens', async () => {
    const token = await server.as.mintServiceToken({
      subject: USER.username,
      audience: 'https://gateway.example/courses',
      scope: ['read:courses-work'],
    });
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
    const { payload } = await jwtVerify(token, jwks, {
      issuer: server.issuer,
      audience: 'https://gateway.example/courses',
      typ: 'at+jwt',
    });
    expect(payload).toMatchObject({
      sub: USER.username,
      client_id: 'portcullis-mcp',
      scope: 'read:courses-work',
    });
    expect(payload.exp! - payload.iat!).toBe(300);

    const before = decodeProtectedHeader(token).kid;
    const published = (await (await fetch(as.jwks_uri!)).json()) as { keys: { kid: string }[] };
    expect(published.keys).toHaveLength(2);
    await server.as.rotateSigningKey();
    const after = await server.as.mintServiceToken({
      subject: 'x',
      audience: 'https://gateway.example/courses',
      scope: [],
    });
    expect(decodeProtectedHeader(after).kid).toBe(published.keys[1]!.kid); // the pre-published next key
    expect(decodeProtectedHeader(after).kid).not.toBe(before);
    const jwksAfter = createRemoteJWKSet(new URL(as.jwks_uri!));
    await expect(jwtVerify(token, jwksAfter, { issuer: server.issuer })).resolves.toBeTruthy();
    const publishedAfter = (await (await fetch(as.jwks_uri!)).json()) as { keys: { kid: string }[] };
    expect(publishedAfter.keys.map((k) => k.kid)).toContain(before);
    expect(publishedAfter.keys).toHaveLength(3);
  });
});
