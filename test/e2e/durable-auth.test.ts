import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initializeMessage } from '../doubles/mcp.js';
import {
  insecure,
  type PublicClient,
  registerPublicClient,
  signInWithPkce,
} from '../doubles/oauth-client.js';
import { PageDriver } from '../doubles/stack-browser.js';
import { type Stack, startStack, USERS } from '../processes/stack.js';

/**
 * Issue 15, the authorization server's part: with state.dataDir (no Redis) a restart of `portcullis up` loses no
 * grant, refresh token, session or registered client — whether `up` was stopped (SIGINT) or its whole process
 * family was killed (SIGKILL). Driven by a strict OAuth client library (oauth4webapi) through Envoy.
 */

const SCOPE = 'read:courses-work write:courses-work';
const REDIRECT = 'http://127.0.0.1:43210/callback';

let stack: Stack;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let registered: PublicClient;
const driver = new PageDriver();

beforeAll(async () => {
  stack = await startStack({
    authYaml: '  dataDir: .portcullis/auth',
    stateYaml: 'state: { dataDir: .portcullis/state }',
  });
  registered = await registerPublicClient(stack.issuer, 'durable state e2e', REDIRECT);
  ({ as, client } = registered);
});

afterAll(async () => {
  await stack?.stop();
});

/** Signs alice in through the real pages (skipping the login page when her session is alive) and exchanges the code. */
async function signIn(): Promise<oauth.TokenEndpointResponse> {
  return signInWithPkce(registered, driver, USERS.alice, { scope: SCOPE, resource: stack.mcpUrl });
}

function refreshRequest(refreshToken: string): Promise<Response> {
  return oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, {
    ...insecure,
    additionalParameters: { resource: stack.mcpUrl },
  });
}

async function refresh(refreshToken: string): Promise<oauth.TokenEndpointResponse> {
  return oauth.processRefreshTokenResponse(as, client, await refreshRequest(refreshToken));
}

/** The MCP endpoint's answer to an initialize with `token`: 200 for a token it accepts. */
async function mcpStatus(token: string): Promise<number> {
  const response = await fetch(stack.mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(initializeMessage('2025-06-18')),
  });
  await response.body?.cancel();
  return response.status;
}

describe('the authorization server across restarts of up on one state.dataDir', () => {
  let refreshToken: string;
  let accessToken: string;

  beforeAll(async () => {
    const tokens = await signIn();
    refreshToken = tokens.refresh_token!;
    accessToken = tokens.access_token;
    expect(await mcpStatus(accessToken)).toBe(200);
  });

  it('redeems a refresh token issued before up was stopped with SIGINT, and keeps the session', async () => {
    const consumedBefore = refreshToken;
    const rotated = await refresh(consumedBefore);
    refreshToken = rotated.refresh_token!;

    await stack.restart('SIGINT');

    // The access token issued before still verifies (the keys are files of auth.dataDir) …
    expect(await mcpStatus(rotated.access_token)).toBe(200);
    // … the refresh token issued before is redeemed, and rotated.
    const after = await refresh(refreshToken);
    expect(after.refresh_token).toBeDefined();
    expect(after.refresh_token).not.toBe(refreshToken);
    expect(await mcpStatus(after.access_token)).toBe(200);
    refreshToken = after.refresh_token!;
    accessToken = after.access_token;

    // The browser session outlived the restart too: no login page this time.
    const pagesBefore = driver.log.length;
    const again = await signIn();
    expect(driver.log.slice(pagesBefore).some((line) => line.includes('/v1/authorize/login'))).toBe(false);
    expect(await mcpStatus(again.access_token)).toBe(200);
  });

  it('redeems a refresh token issued before every process of up was killed with SIGKILL', async () => {
    const rotated = await refresh(refreshToken);
    const beforeCrash = rotated.refresh_token!;

    await stack.restart('SIGKILL');

    expect(await mcpStatus(rotated.access_token)).toBe(200);
    const after = await refresh(beforeCrash);
    expect(await mcpStatus(after.access_token)).toBe(200);
    // Consumption is durable as well: the token rotated away before the crash is a replay now.
    const replay = await refreshRequest(refreshToken);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
  });
});
