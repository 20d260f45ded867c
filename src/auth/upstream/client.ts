import { createRemoteJWKSet, type JWTVerifyGetKey } from 'jose';
import * as oauth from 'oauth4webapi';
import { type UpstreamIdentity, verifyIdToken } from './id-token.js';
import type { ResolvedUpstream } from './options.js';

/** The secrets of one pending upstream sign-in, kept server-side until its callback. */
export interface UpstreamAttempt {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider's tokens of a completed sign-in: what user-delegated connections use (when delegated tokens are kept). */
export interface UpstreamTokens {
  accessToken: string;
  refreshToken?: string;
  /** Seconds, as the provider said. */
  expiresIn?: number;
  /** What the provider granted: its answer's `scope`, else what was asked for (RFC 6749 §5.1). */
  scope: string;
}

/** A failure of the upstream sign-in; `message` is safe to show, `detail` goes to the log only. */
export class UpstreamError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * The relying-party side of the upstream OpenID Connect provider: discovery (lazy, retried after a failure so
 * the service starts while the provider is down), the authorization URL with PKCE S256, state and nonce, and
 * the callback: RFC 9207 iss and state check, code exchange with client_secret_basic, ID token verified against
 * the provider's JWKS.
 */
export class UpstreamClient {
  #metadata: Promise<oauth.AuthorizationServer> | undefined;
  #jwks: JWTVerifyGetKey | undefined;
  readonly #client: oauth.Client;
  readonly #auth: oauth.ClientAuth;

  constructor(
    readonly config: ResolvedUpstream,
    readonly redirectUri: string,
    private readonly clock: () => number,
  ) {
    this.#client = { client_id: config.clientId };
    this.#auth = oauth.ClientSecretBasic(config.clientSecret);
  }

  #http() {
    return {
      signal: AbortSignal.timeout(this.config.timeoutMs),
      ...(this.config.insecure ? { [oauth.allowInsecureRequests]: true } : {}),
    };
  }

  metadata(): Promise<oauth.AuthorizationServer> {
    this.#metadata ??= (async () => {
      const issuer = new URL(this.config.issuer);
      const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...this.#http() });
      const metadata = await oauth.processDiscoveryResponse(issuer, response);
      if (!metadata.authorization_endpoint || !metadata.token_endpoint || !metadata.jwks_uri)
        throw new TypeError(
          'the discovery document lacks authorization_endpoint, token_endpoint or jwks_uri',
        );
      return metadata;
    })().catch((err: unknown) => {
      this.#metadata = undefined;
      throw new UpstreamError(
        'temporarily_unavailable',
        `${this.config.name} cannot be reached right now; try again later`,
        `discovery of ${this.config.issuer} failed: ${String(err)}`,
      );
    });
    return this.#metadata;
  }

  /** Starts a sign-in: the secrets to keep and the provider URL to send the browser to. */
  async start(): Promise<{ attempt: UpstreamAttempt; url: string }> {
    const metadata = await this.metadata();
    const attempt: UpstreamAttempt = {
      state: oauth.generateRandomState(),
      nonce: oauth.generateRandomNonce(),
      codeVerifier: oauth.generateRandomCodeVerifier(),
    };
    const url = new URL(metadata.authorization_endpoint!);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', this.config.clientId);
    url.searchParams.set('redirect_uri', this.redirectUri);
    url.searchParams.set('scope', this.config.scopes.join(' '));
    // OpenID Connect Core §11: offline_access (a refresh token) is granted only on explicit consent.
    if (this.config.scopes.includes('offline_access')) url.searchParams.set('prompt', 'consent');
    url.searchParams.set('state', attempt.state);
    url.searchParams.set('nonce', attempt.nonce);
    url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(attempt.codeVerifier));
    url.searchParams.set('code_challenge_method', 'S256');
    return { attempt, url: url.href };
  }

  /** Completes a sign-in from the callback's query; throws UpstreamError for anything the provider got wrong. */
  async finish(
    query: URLSearchParams,
    attempt: UpstreamAttempt,
  ): Promise<{ identity: UpstreamIdentity; tokens: UpstreamTokens }> {
    const metadata = await this.metadata();
    let params: URLSearchParams;
    try {
      params = oauth.validateAuthResponse(metadata, this.#client, query, attempt.state);
    } catch (err) {
      if (err instanceof oauth.AuthorizationResponseError) {
        throw new UpstreamError(
          err.error,
          `${this.config.name} refused the sign-in: ${err.error}${err.error_description ? ` (${err.error_description})` : ''}`,
        );
      }
      throw new UpstreamError(
        'invalid_request',
        `the answer from ${this.config.name} is not valid`,
        String(err),
      );
    }
    let result: oauth.TokenEndpointResponse;
    try {
      const response = await oauth.authorizationCodeGrantRequest(
        metadata,
        this.#client,
        this.#auth,
        params,
        this.redirectUri,
        attempt.codeVerifier,
        this.#http(),
      );
      result = await oauth.processAuthorizationCodeResponse(metadata, this.#client, response, {
        expectedNonce: attempt.nonce,
        requireIdToken: true,
      });
    } catch (err) {
      // An error answer of the token endpoint, or a token response (ID token claims, nonce) oauth4webapi refused.
      const message =
        err instanceof oauth.ResponseBodyError
          ? `${this.config.name} did not confirm the sign-in (${err.error}); start again from the application`
          : `the sign-in with ${this.config.name} was refused`;
      throw new UpstreamError('access_denied', message, String(err));
    }
    this.#jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri!), {
      timeoutDuration: this.config.timeoutMs,
    });
    let identity: UpstreamIdentity;
    try {
      identity = await verifyIdToken(result.id_token!, this.#jwks, {
        issuer: metadata.issuer,
        clientId: this.config.clientId,
        nonce: attempt.nonce,
        now: this.clock(),
      });
    } catch (err) {
      throw new UpstreamError(
        'access_denied',
        `the sign-in with ${this.config.name} was refused`,
        String(err),
      );
    }
    if (identity.name === undefined && metadata.userinfo_endpoint)
      await this.#addName(metadata, result, identity);
    const tokens: UpstreamTokens = {
      accessToken: result.access_token,
      scope:
        typeof result.scope === 'string' && result.scope !== '' ? result.scope : this.config.scopes.join(' '),
    };
    if (result.refresh_token) tokens.refreshToken = result.refresh_token;
    if (typeof result.expires_in === 'number') tokens.expiresIn = result.expires_in;
    return { identity, tokens };
  }

  /**
   * Providers usually put profile claims only in UserInfo (OpenID Connect Core §5.4). The name is cosmetic (the
   * consent page shows the subject without it), so a UserInfo failure never refuses the sign-in.
   */
  async #addName(
    metadata: oauth.AuthorizationServer,
    tokens: oauth.TokenEndpointResponse,
    identity: UpstreamIdentity,
  ): Promise<void> {
    try {
      const response = await oauth.userInfoRequest(metadata, this.#client, tokens.access_token, this.#http());
      const claims = await oauth.processUserInfoResponse(metadata, this.#client, identity.sub, response);
      if (typeof claims.name === 'string') identity.name = claims.name;
      else if (typeof claims.email === 'string') identity.email = claims.email;
    } catch {}
  }
}
