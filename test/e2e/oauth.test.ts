import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeMessage } from '../doubles/mcp.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';

/**
 * A strict, independent OAuth client (oauth4webapi) against the authorization server as `portcullis up` runs it,
 * every request through Envoy's gateway listener: discovery → registration → PKCE authorization (the real login
 * and consent pages over HTTP) → code exchange → refresh → revocation, once per client authentication method.
 */

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const SCOPE = 'read:courses-work write:courses-work';

let stack: Stack;
let as: oauth.AuthorizationServer;

beforeAll(async () => {
  stack = await startStack();
  const issuer = new URL(stack.issuer);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
});

afterAll(async () => {
  await stack?.stop();
});

function clientAuth(method: string, secret: string | undefined): oauth.ClientAuth {
  if (method === 'client_secret_basic') return oauth.ClientSecretBasic(secret!);
  if (method === 'client_secret_post') return oauth.ClientSecretPost(secret!);
  return oauth.None();
}

/** POSTs JSON-RPC to the MCP endpoint through Envoy with a bearer token. */
async function mcpInitialize(token: string): Promise<Response> {
  return fetch(stack.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(initializeMessage('2025-06-18')),
  });
}

describe('discovery through Envoy', () => {
  it('serves the spec §2.1 metadata at the issuer well-known URL, with the MCP-Protocol-Version header accepted', async () => {
    const response = await fetch(`${stack.gatewayUrl}/.well-known/oauth-authorization-server`, {
      headers: { 'MCP-Protocol-Version': '2024-11-05' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('server')).toBe('envoy');
    const metadata = await response.json();
    expect(metadata).toMatchObject({
      issuer: stack.issuer,
      authorization_endpoint: `${stack.gatewayUrl}/v1/authorize`,
      token_endpoint: `${stack.issuer}/v1/token`,
      registration_endpoint: `${stack.issuer}/v1/register`,
      revocation_endpoint: `${stack.issuer}/v1/token`,
      jwks_uri: `${stack.issuer}/v1/jwks`,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: expect.arrayContaining(['authorization_code', 'refresh_token']),
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256', 'plain'],
      scopes_supported: ['read:courses-work', 'write:courses-work', 'read:grades-work', 'write:grades-work'],
    });
    expect(as.issuer).toBe(stack.issuer);
  });

  it('sends only the service paths to the service: another well-known name is 404 from Envoy itself', async () => {
    const response = await fetch(`${stack.gatewayUrl}/.well-known/openid-configuration`);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ statusCode: 404, message: 'Resource not found' });
    // The service's own paths, with and without the path-inserted form, do reach it.
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/v1/mcp',
    ]) {
      const prm = await fetch(`${stack.gatewayUrl}${path}`);
      expect(prm.status).toBe(200);
      expect(await prm.json()).toMatchObject({
        resource: stack.mcpUrl,
        authorization_servers: [stack.issuer],
      });
    }
  });
});

describe.each(['none', 'client_secret_basic', 'client_secret_post'] as const)('client with %s', (method) => {
  it('registers, authorizes with PKCE through the pages, exchanges, refreshes and revokes', async () => {
    const redirectUri = 'http://127.0.0.1:43210/callback';
    const registration = (await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        {
          client_name: `e2e ${method}`,
          redirect_uris: [redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: method,
        },
        insecure,
      ),
    )) as Record<string, unknown>;
    expect(registration.redirect_uris).toEqual([redirectUri]);
    expect(registration.token_endpoint_auth_method).toBe(method);
    expect(typeof registration.client_id_issued_at).toBe('number');
    const secret = registration.client_secret as string | undefined;
    expect(secret === undefined).toBe(method === 'none');
    const client: oauth.Client = {
      client_id: registration.client_id as string,
      token_endpoint_auth_method: method,
    };
    const auth = clientAuth(method, secret);

    // Authorization request as the library builds it; the user goes through the real pages.
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      scope: SCOPE,
      state,
      resource: stack.mcpUrl,
    }).toString();
    const driver = new PageDriver();
    const callback = await driver.authorize(authorizationUrl.href, USERS.alice);
    expect(callback.origin + callback.pathname).toBe(redirectUri);
    expect(callback.searchParams.get('iss')).toBe(stack.issuer);
    // Login page, login post, consent page, consent post: every hop through Envoy.
    expect(driver.log.map((line) => line.replace(/\?.*? /, ' '))).toEqual([
      `GET ${stack.gatewayUrl}/v1/authorize -> 200`,
      `POST ${stack.gatewayUrl}/v1/authorize/login -> 303`,
      expect.stringMatching(new RegExp(`^GET ${stack.gatewayUrl}/v1/authorize/consent -> 200$`)),
      `POST ${stack.gatewayUrl}/v1/authorize/consent -> 303`,
    ]);
    const params = oauth.validateAuthResponse(as, client, callback, state);

    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, redirectUri, verifier, {
        ...insecure,
        additionalParameters: { resource: stack.mcpUrl },
      }),
    );
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe(SCOPE);
    expect(typeof tokens.refresh_token).toBe('string');

    // The access token verifies against the JWKS published at jwks_uri (fetched through Envoy).
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: stack.issuer,
      audience: stack.mcpUrl,
      typ: 'at+jwt',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: 'alice', client_id: client.client_id, scope: SCOPE });
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(typeof payload.jti).toBe('string');
    expect((await mcpInitialize(tokens.access_token)).status).toBe(200);

    // Refresh: rotated refresh token, new access token for the same grant.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, {
        ...insecure,
        additionalParameters: { resource: stack.mcpUrl },
      }),
    );
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    const { payload: refreshedClaims } = await jwtVerify(refreshed.access_token, jwks, {
      issuer: stack.issuer,
      audience: stack.mcpUrl,
    });
    expect(refreshedClaims).toMatchObject({ sub: 'alice', client_id: client.client_id, scope: SCOPE });

    // Revocation at the token URL: the access token is refused by the MCP endpoint from now on, and revoking
    // the refresh token ends its family.
    expect(decodeProtectedHeader(refreshed.access_token).typ).toBe('at+jwt');
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, refreshed.access_token, insecure),
    );
    const refused = await mcpInitialize(refreshed.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);

    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, auth, refreshed.refresh_token!, {
        ...insecure,
        additionalParameters: { token_type_hint: 'refresh_token' },
      }),
    );
    const afterRevocation = await oauth.refreshTokenGrantRequest(
      as,
      client,
      auth,
      refreshed.refresh_token!,
      insecure,
    );
    expect(afterRevocation.status).toBe(400);
    expect(await afterRevocation.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
