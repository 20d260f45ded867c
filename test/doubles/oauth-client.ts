import * as oauth from 'oauth4webapi';
import type { PageDriver, SignInAs } from './stack-browser.js';

/** The strict client talks plain HTTP to the gateway on loopback. */
export const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** A refresh_token grant by the strict client, its response checked and parsed (throws on an error response). */
export async function refreshTokens(
  as: oauth.AuthorizationServer,
  client: oauth.Client,
  auth: oauth.ClientAuth,
  refreshToken: string,
  additionalParameters?: Record<string, string>,
): Promise<oauth.TokenEndpointResponse> {
  const options = additionalParameters === undefined ? insecure : { ...insecure, additionalParameters };
  return oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, auth, refreshToken, options),
  );
}

/** A public client (PKCE, no secret) registered through RFC 7591, with the server's metadata it was registered at. */
export interface PublicClient {
  readonly as: oauth.AuthorizationServer;
  readonly client: oauth.Client;
  readonly redirectUri: string;
}

/** Discovers the authorization server at `issuer` (RFC 8414) and registers a public client there (RFC 7591). */
export async function registerPublicClient(
  issuer: string,
  clientName: string,
  redirectUri: string,
): Promise<PublicClient> {
  const issuerUrl = new URL(issuer);
  const as = await oauth.processDiscoveryResponse(
    issuerUrl,
    await oauth.discoveryRequest(issuerUrl, { algorithm: 'oauth2', ...insecure }),
  );
  const registration = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      {
        client_name: clientName,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      insecure,
    ),
  );
  return {
    as,
    client: { client_id: registration.client_id, token_endpoint_auth_method: 'none' },
    redirectUri,
  };
}

/**
 * The authorization code flow with PKCE as the strict client runs it: the user signs in through the real pages
 * (`driver` keeps the browser session: a live one skips the login page), and the code is exchanged for tokens for
 * `resource` (RFC 8707).
 */
export async function signInWithPkce(
  registered: PublicClient,
  driver: PageDriver,
  user: SignInAs,
  options: { scope: string; resource: string },
): Promise<oauth.TokenEndpointResponse> {
  const { as, client, redirectUri } = registered;
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirectUri,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    scope: options.scope,
    state,
    resource: options.resource,
  }).toString();
  const callback = await driver.authorize(url.href, user);
  const params = oauth.validateAuthResponse(as, client, callback, state);
  return oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
      ...insecure,
      additionalParameters: { resource: options.resource },
    }),
  );
}
