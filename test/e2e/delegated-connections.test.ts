import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import * as oauth from 'oauth4webapi';
import Provider from 'oidc-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insecure, registerPublicClient, signInWithPkce } from '../doubles/oauth-client.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';
import { until } from '../processes/wait.js';

/**
 * get-authorization-context's user-delegated connections through `portcullis up` (Envoy, the engine and the service
 * as separate processes, state.dataDir shared): a user signs in through the authorization server's upstream
 * provider (node-oidc-provider) on the real login page; the service keeps the provider's tokens sealed; a policy
 * with identity-type="jwt" and the user's own access token gets the user's upstream access token (the echo backend
 * shows it), refreshed once it nears expiry. A user who never signed in upstream gets on-error, or null with
 * ignore-error.
 */

const UPSTREAM_CLIENT = { client_id: 'portcullis', client_secret: 'upstream-secret-0123456789abcdef' };
/** Seconds an upstream access token lives: short, so the test sees a refresh. */
const UPSTREAM_TOKEN_TTL = 4;

const POLICY = `<policies>
  <inbound>
    <choose>
      <when condition="@(context.Request.Headers.GetValueOrDefault(&quot;X-Ignore&quot;, &quot;&quot;) == &quot;yes&quot;)">
        <get-authorization-context provider-id="corp" authorization-id="@(context.Request.Headers.GetValueOrDefault(&quot;X-Connection&quot;, &quot;me&quot;))" context-variable-name="auth" identity-type="jwt" identity="@(context.Request.Headers.GetValueOrDefault(&quot;X-User-Token&quot;, &quot;&quot;))" ignore-error="true" />
      </when>
      <otherwise>
        <get-authorization-context provider-id="corp" authorization-id="@(context.Request.Headers.GetValueOrDefault(&quot;X-Connection&quot;, &quot;me&quot;))" context-variable-name="auth" identity-type="jwt" identity="@(context.Request.Headers.GetValueOrDefault(&quot;X-User-Token&quot;, &quot;&quot;))" />
      </otherwise>
    </choose>
    <set-header name="X-Upstream-Token" exists-action="override">
      <value>@{ var found = (Authorization)context.Variables.GetValueOrDefault("auth"); return found == null ? "none" : found.AccessToken; }</value>
    </set-header>
  </inbound>
  <backend><forward-request /></backend>
  <outbound />
  <on-error>
    <return-response>
      <set-status code="500" reason="Internal Server Error" />
      <set-header name="X-Reason" exists-action="override"><value>@(context.LastError.Reason)</value></set-header>
      <set-body>@(context.LastError.Message)</set-body>
    </return-response>
  </on-error>
</policies>`;

let upstreamHttp: Server;
let upstreamUrl: string;
let stack: Stack;
/** The grants the provider's token endpoint answered, in order. */
const grants: string[] = [];

beforeAll(async () => {
  let handler: ((req: never, res: never) => void) | undefined;
  upstreamHttp = createServer((req, res) => handler!(req as never, res as never));
  await new Promise<void>((resolve) => upstreamHttp.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstreamHttp.address() as AddressInfo).port}`;

  stack = await startStack({
    authYaml: `  identityProvider:
    id: corp
    name: Corp ID
    issuer: ${upstreamUrl}
    clientId: ${UPSTREAM_CLIENT.client_id}
    clientSecret: ${UPSTREAM_CLIENT.client_secret}
    scopes: [openid, profile, offline_access]
  dataDir: auth-data`,
    stateYaml: 'state: { dataDir: data }',
    identitiesYaml: `identities:
  delegatedTokenKey: a-test-key-the-engine-and-service-share
  credentialProviders:
    corp:
      source: { type: client-credentials, tokenUrl: "${upstreamUrl}/token", clientId: ${UPSTREAM_CLIENT.client_id}, clientSecret: ${UPSTREAM_CLIENT.client_secret} }
      connections:
        me: { delegated: true }
        orders: { delegated: true, scopes: [orders.read] }`,
    policyXml: POLICY,
  });

  const provider = new Provider(upstreamUrl, {
    clients: [
      {
        ...UPSTREAM_CLIENT,
        redirect_uris: [`${stack.gatewayUrl}/v1/authorize/upstream/callback`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    async findAccount(_ctx: unknown, id: string) {
      return { accountId: id, claims: async () => ({ sub: id, name: `Upstream ${id}` }) };
    },
    claims: { openid: ['sub'], profile: ['name'] },
    scopes: ['openid', 'offline_access', 'profile', 'orders.read', 'orders.write'],
    features: { introspection: { enabled: true } },
    cookies: { keys: ['a-test-cookie-key-that-is-long-enough'] },
    jwks: {
      keys: [
        {
          ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)),
          kid: 'k1',
          alg: 'RS256',
          use: 'sig',
        },
      ],
    },
    ttl: {
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: UPSTREAM_TOKEN_TTL,
      IdToken: 300,
      RefreshToken: 3600,
    },
    // Every refresh hands out a new refresh token and spends the old one: the engine must write it back.
    rotateRefreshToken: true,
    pkce: { required: () => true },
  });
  (provider as unknown as NodeJS.EventEmitter).on(
    'grant.success',
    (ctx: { oidc: { params?: { grant_type?: unknown } } }) => {
      grants.push(String(ctx.oidc.params?.grant_type));
    },
  );
  handler = provider.callback() as never;
});

afterAll(async () => {
  await stack?.stop();
  upstreamHttp?.closeAllConnections();
  await new Promise((resolve) => upstreamHttp?.close(resolve));
});

/**
 * A user signed in at this stack's authorization server (upstream or with a password): their access token, and how
 * their client revokes the refresh token (RFC 7009, which ends the grant).
 */
async function signIn(
  user: Parameters<typeof signInWithPkce>[2],
): Promise<{ accessToken: string; revoke(): Promise<void> }> {
  const registered = await registerPublicClient(
    stack.issuer,
    'delegated test',
    'http://127.0.0.1:1/callback',
  );
  const tokens = await signInWithPkce(registered, new PageDriver(), user, {
    scope: 'read:courses-work',
    resource: stack.mcpUrl,
  });
  return {
    accessToken: tokens.access_token,
    async revoke() {
      expect(tokens.refresh_token).toBeDefined();
      const response = await oauth.revocationRequest(
        registered.as,
        registered.client,
        oauth.None(),
        tokens.refresh_token!,
        { ...insecure, additionalParameters: { token_type_hint: 'refresh_token' } },
      );
      await oauth.processRevocationResponse(response);
    },
  };
}

async function userToken(user: Parameters<typeof signInWithPkce>[2]): Promise<string> {
  return (await signIn(user)).accessToken;
}

/** A call through the gateway presenting the user's token; what the echo backend received as the upstream token. */
async function echoCall(
  token: string,
  ignore = false,
  connection = 'me',
): Promise<{ status: number; upstream?: string; reason?: string | null }> {
  const response = await fetch(`${stack.gatewayUrl}/echo/things/x`, {
    headers: { 'x-user-token': token, 'x-connection': connection, ...(ignore ? { 'x-ignore': 'yes' } : {}) },
  });
  await response.arrayBuffer();
  if (response.status !== 200) return { status: response.status, reason: response.headers.get('x-reason') };
  return { status: 200, upstream: String(stack.echo.received.at(-1)!.headers['x-upstream-token']) };
}

/** The scopes of an upstream access token, as the provider's introspection endpoint (RFC 7662) tells them. */
async function scopesOf(accessToken: string | undefined): Promise<string[]> {
  const response = await fetch(`${upstreamUrl}/token/introspection`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${UPSTREAM_CLIENT.client_id}:${UPSTREAM_CLIENT.client_secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ token: accessToken ?? '' }),
  });
  const body = (await response.json()) as { active: boolean; scope?: string };
  expect(body.active).toBe(true);
  return (body.scope ?? '').split(' ').sort();
}

describe('user-delegated connections through portcullis up', () => {
  it('hands the policy the upstream token of the user who signed in upstream, and refreshes it near expiry', async () => {
    const bobToken = await userToken({ upstream: { origin: upstreamUrl, account: 'bob' } });
    expect(grants).toEqual(['authorization_code']);

    const first = await echoCall(bobToken);
    expect(first.status).toBe(200);
    expect(first.upstream).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    // Served from what the sign-in kept: no call to the provider.
    expect(grants).toEqual(['authorization_code']);

    // The upstream token nears its expiry: the engine refreshes it once, and again with the rotated refresh token.
    let second = first;
    await until(
      async () => {
        second = await echoCall(bobToken);
        return second.upstream !== first.upstream;
      },
      'the upstream token to be refreshed',
      (UPSTREAM_TOKEN_TTL + 5) * 1000,
    );
    expect(second.status).toBe(200);
    expect(grants).toEqual(['authorization_code', 'refresh_token']);
    let third = second;
    await until(
      async () => {
        third = await echoCall(bobToken);
        return third.upstream !== second.upstream;
      },
      'the upstream token to be refreshed with the rotated refresh token',
      (UPSTREAM_TOKEN_TTL + 5) * 1000,
    );
    expect(third.status).toBe(200);
    expect(grants).toEqual(['authorization_code', 'refresh_token', 'refresh_token']);
  });

  it('runs on-error for a user who never signed in upstream, or sets null with ignore-error', async () => {
    const aliceToken = await userToken(USERS.alice);
    expect(await echoCall(aliceToken)).toEqual({ status: 500, reason: 'AuthorizationNotAvailable' });
    expect(await echoCall(aliceToken, true)).toMatchObject({ status: 200, upstream: 'none' });
  });

  it('asks at sign-in for a connection’s scopes, narrows its token to them, and keeps them on refresh', async () => {
    const carolToken = await userToken({ upstream: { origin: upstreamUrl, account: 'carol' } });
    const signedIn = await echoCall(carolToken);
    // The sign-in asked for the provider's scopes and the connection's: one consent covers both.
    expect(await scopesOf(signedIn.upstream)).toEqual(['offline_access', 'openid', 'orders.read', 'profile']);
    const orders = await echoCall(carolToken, false, 'orders');
    expect(orders.status).toBe(200);
    expect(await scopesOf(orders.upstream)).toEqual(['orders.read']);

    let renewedOrders = orders;
    await until(
      async () => {
        renewedOrders = await echoCall(carolToken, false, 'orders');
        return renewedOrders.upstream !== orders.upstream;
      },
      'the narrowed token to be refreshed',
      (UPSTREAM_TOKEN_TTL + 5) * 1000,
    );
    expect(await scopesOf(renewedOrders.upstream)).toEqual(['orders.read']);
    let renewed = signedIn;
    await until(
      async () => {
        renewed = await echoCall(carolToken);
        return renewed.upstream !== signedIn.upstream;
      },
      'the sign-in token to be refreshed',
      (UPSTREAM_TOKEN_TTL + 5) * 1000,
    );
    expect(await scopesOf(renewed.upstream)).toEqual(['offline_access', 'openid', 'orders.read', 'profile']);
  });

  it('forgets the user’s upstream tokens when their grant is revoked (RFC 7009): the connections fail then', async () => {
    const dave = await signIn({ upstream: { origin: upstreamUrl, account: 'dave' } });
    expect((await echoCall(dave.accessToken)).status).toBe(200);
    expect((await echoCall(dave.accessToken, false, 'orders')).status).toBe(200);
    await dave.revoke();
    // The policy still reads the user from the token it is given; the kept tokens are gone, even
    // those the engine had cached.
    expect(await echoCall(dave.accessToken)).toEqual({ status: 500, reason: 'AuthorizationNotAvailable' });
    expect(await echoCall(dave.accessToken, false, 'orders')).toEqual({
      status: 500,
      reason: 'AuthorizationNotAvailable',
    });
    expect(await echoCall(dave.accessToken, true)).toMatchObject({ status: 200, upstream: 'none' });
  });
});
