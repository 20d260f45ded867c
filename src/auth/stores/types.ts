/**
 * Storage interfaces of the authorization server. Every operation is async and every state change that must
 * not race ("consume this code once", "revoke this grant and list its tokens") is a single operation, so a
 * Redis implementation can map each one onto one command or one MULTI/Lua script.
 * All times are epoch seconds.
 */

export type TokenEndpointAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';
export type GrantType = 'authorization_code' | 'refresh_token';

/** Validated RFC 7591 metadata as echoed to the client. */
export interface ClientMetadata {
  redirect_uris: string[];
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  grant_types: GrantType[];
  response_types: ['code'];
  application_type: 'web' | 'native';
  client_name?: string;
  client_uri?: string;
  logo_uri?: string;
  scope?: string;
  contacts?: string[];
  software_id?: string;
  software_version?: string;
}

export interface ClientRecord {
  clientId: string;
  /** digest() of the client secret; absent for public clients. */
  secretDigest?: string;
  /** digest() of the RFC 7592 registration access token. */
  registrationTokenDigest?: string;
  issuedAt: number;
  /** 0 = never (RFC 7591 §3.2.1). */
  secretExpiresAt: number;
  metadata: ClientMetadata;
}

export interface AuthorizationCodeRecord {
  /** digest() of the code */
  id: string;
  clientId: string;
  /** The redirect_uri the authorization request carried, or undefined when it was omitted (single registered URI). */
  redirectUri: string | undefined;
  codeChallenge: string;
  codeChallengeMethod: 'S256' | 'plain';
  scope: string[];
  resource: string;
  sub: string;
  authTime: number;
  grantId: string;
  expiresAt: number;
  consumed: boolean;
}

/** A grant is the family of every token issued from one authorization code. Revoking it kills them all. */
export interface GrantRecord {
  id: string;
  clientId: string;
  sub: string;
  scope: string[];
  resource: string;
  createdAt: number;
  expiresAt: number;
  revoked: boolean;
}

export interface RefreshTokenRecord {
  /** digest() of the refresh token */
  id: string;
  grantId: string;
  clientId: string;
  sub: string;
  scope: string[];
  resource: string;
  issuedAt: number;
  expiresAt: number;
  consumed: boolean;
}

export interface SessionRecord {
  id: string;
  /** Set once the user has logged in. */
  sub?: string;
  /** Display name of an upstream user (configured users take theirs from the configuration). */
  name?: string;
  authTime?: number;
  expiresAt: number;
}

/** A pending authorization request between /authorize and the consent decision. */
export interface InteractionRecord {
  id: string;
  /** The browser session this interaction belongs to: a form posted from another session is refused. */
  sessionId: string;
  csrf: string;
  clientId: string;
  /** The validated redirect target (the URI requested or the single registered one). */
  redirectTarget: string;
  redirectUriParam: string | undefined;
  state: string | undefined;
  codeChallenge: string;
  codeChallengeMethod: 'S256' | 'plain';
  scope: string[];
  resource: string;
  /** A redirectable error found at /authorize, delivered only after the user has logged in (OAuth 2.1 §7.12.2). */
  pendingError?: { code: string; description: string };
  /** Set on the copy kept for an upstream sign-in in progress (see src/auth/upstream/sign-in.ts). */
  upstream?: { interactionId: string; state: string; nonce: string; codeVerifier: string };
  expiresAt: number;
}

export interface ClientStore {
  get(clientId: string): Promise<ClientRecord | undefined>;
  put(client: ClientRecord): Promise<void>;
  delete(clientId: string): Promise<boolean>;
}

/** Codes and refresh tokens share this shape: find by digest, consume exactly once. */
export interface OneTimeStore<T extends { id: string; expiresAt: number; consumed: boolean }> {
  put(record: T): Promise<void>;
  /** Returns the record even when consumed, so replays can be detected; undefined when unknown or expired. */
  find(id: string): Promise<T | undefined>;
  /** Marks the record consumed; true only for the single caller that flipped it. */
  consume(id: string): Promise<boolean>;
  delete(id: string): Promise<void>;
}

export interface GrantStore {
  put(grant: GrantRecord): Promise<void>;
  get(grantId: string): Promise<GrantRecord | undefined>;
  /** Records an access token issued from the grant; false (and nothing recorded) when the grant is revoked or gone. */
  addAccessToken(grantId: string, jti: string, expiresAt: number): Promise<boolean>;
  /** Marks the grant revoked and returns its access tokens that are still alive, in one step. */
  revoke(grantId: string): Promise<{ jti: string; expiresAt: number }[]>;
}

/** Revoked access tokens by jti, each kept until the token would have expired anyway. */
export interface AccessTokenDenylist {
  add(jti: string, expiresAt: number): Promise<void>;
  has(jti: string): Promise<boolean>;
}

/** Short-lived keyed records (sessions, interactions, remembered consents). */
export interface ExpiringStore<T> {
  get(key: string): Promise<T | undefined>;
  set(key: string, value: T, expiresAt: number): Promise<void>;
  delete(key: string): Promise<boolean>;
}

/** Fixed-window counters for abuse limits. */
export interface CounterStore {
  /** Adds one to `key` and returns the new count; the window starts at the first hit and lasts windowSeconds. */
  increment(key: string, windowSeconds: number): Promise<{ count: number; resetAt: number }>;
  get(key: string): Promise<{ count: number; resetAt: number } | undefined>;
  reset(key: string): Promise<void>;
}

export interface ConsentRecord {
  scope: string[];
  resources: string[];
}

export interface AuthStores {
  clients: ClientStore;
  codes: OneTimeStore<AuthorizationCodeRecord>;
  refreshTokens: OneTimeStore<RefreshTokenRecord>;
  grants: GrantStore;
  denylist: AccessTokenDenylist;
  sessions: ExpiringStore<SessionRecord>;
  interactions: ExpiringStore<InteractionRecord>;
  consents: ExpiringStore<ConsentRecord>;
  counters: CounterStore;
  /** Stops background sweeps; called by close(). */
  close(): Promise<void>;
}
