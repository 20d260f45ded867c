import { randomUUID } from 'node:crypto';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { expect } from 'vitest';
import { PageDriver } from './stack-browser.js';

export interface HeadlessProviderOptions {
  /** Who signs in on the login page. */
  readonly user: { username: string; password: string };
  readonly clientName: string;
  readonly redirectUrl?: string;
  /** Replaces the scope the client asks for, as a user narrowing the request would. */
  readonly scope?: string;
  /** When given, the callback must carry this `iss` (RFC 9207). */
  readonly issuer?: string;
  /** A client metadata document URL: the SDK uses it as client_id when the server supports CIMD. */
  readonly clientMetadataUrl?: string;
  /**
   * False: refresh tokens are dropped when saved. The TypeScript SDK (1.x) answers a 403 `insufficient_scope` by
   * refreshing first when it holds a refresh token — which cannot widen the scope — and only without one sends the
   * user to authorize the wider scope.
   */
  readonly keepRefreshTokens?: boolean;
}

/**
 * A headless OAuthClientProvider for the official MCP SDK client: state in memory, and `redirectToAuthorization`
 * drives the login and consent pages over HTTP like a user in a browser, keeping the code for `finishAuth`.
 */
export class HeadlessProvider implements OAuthClientProvider {
  readonly driver = new PageDriver();
  readonly savedTokens: OAuthTokens[] = [];
  readonly authorizationUrls: URL[] = [];
  readonly redirectUrl: string;
  code: string | undefined;
  #client: OAuthClientInformationMixed | undefined;
  #verifier = '';
  readonly #state = randomUUID();

  readonly clientMetadataUrl: string | undefined;

  constructor(private readonly options: HeadlessProviderOptions) {
    this.redirectUrl = options.redirectUrl ?? 'http://127.0.0.1:47123/callback';
    this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this.#state;
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info;
  }
  tokens() {
    return this.savedTokens.at(-1);
  }
  saveTokens(tokens: OAuthTokens) {
    if (this.options.keepRefreshTokens === false) {
      const { refresh_token: _dropped, ...kept } = tokens;
      this.savedTokens.push(kept);
    } else this.savedTokens.push(tokens);
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  async redirectToAuthorization(url: URL) {
    if (this.options.scope) url.searchParams.set('scope', this.options.scope);
    this.authorizationUrls.push(new URL(url));
    const callback = await this.driver.authorize(url.href, this.options.user);
    expect(callback.searchParams.get('state')).toBe(this.#state);
    if (this.options.issuer !== undefined) expect(callback.searchParams.get('iss')).toBe(this.options.issuer);
    this.code = callback.searchParams.get('code') ?? undefined;
  }
}
