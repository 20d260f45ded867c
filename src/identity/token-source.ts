/** One token request: the audience the token is for, and the user-assigned identity when the policy names one. */
export interface TokenRequest {
  readonly resource: string;
  /** A user-assigned identity the source should act as (azure-imds passes it on); absent: the source's own. */
  readonly clientId?: string;
}

export interface IssuedToken {
  readonly token: string;
  /** Milliseconds since the epoch. */
  readonly expiresAt: number;
}

/** Where tokens come from; one file per kind in sources/, each fetching fresh (the cache is TokenCache's). */
export interface TokenSource {
  /** Fetches a new token; rejects with IdentityError. */
  fetch(request: TokenRequest): Promise<IssuedToken>;
  /** The user-assigned identities this source can act as besides its own (azure-imds: any). */
  readonly actsForAnyClientId: boolean;
}

/** How long a token of unknown lifetime is kept (an endpoint that states none). */
export const UNKNOWN_LIFETIME_MS = 5 * 60 * 1000;
/** At most this long before expiry a cached token is refreshed. */
const REFRESH_MARGIN_MS = 5 * 60 * 1000;
/** Distinct (source, resource, client id) entries kept; a resource computed per request cannot grow the map without end. */
const MAX_ENTRIES = 1000;

interface Entry {
  token: IssuedToken;
  obtainedAt: number;
}

/**
 * Tokens cached until shortly before expiry (five minutes, or a quarter of a short lifetime), with one fetch in
 * flight per key however many requests want it at once. Failures are not cached: the next request tries again (a
 * token that still lives is served meanwhile).
 */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<IssuedToken>>();

  constructor(private readonly now: () => number = Date.now) {}

  async get(key: string, fetch: () => Promise<IssuedToken>): Promise<IssuedToken> {
    const cached = this.#entries.get(key);
    const now = this.now();
    if (cached !== undefined) {
      const margin = Math.min(REFRESH_MARGIN_MS, (cached.token.expiresAt - cached.obtainedAt) / 4);
      if (now < cached.token.expiresAt - margin) return cached.token;
    }
    const pending = this.#inFlight.get(key);
    if (pending !== undefined) return pending;
    const started = (async () => {
      try {
        let token: IssuedToken;
        try {
          token = await fetch();
        } catch (error) {
          // A refresh that fails while the cached token still lives leaves it in use; the next request tries again.
          if (cached !== undefined && this.now() < cached.token.expiresAt) return cached.token;
          throw error;
        }
        this.#entries.delete(key);
        this.#entries.set(key, { token, obtainedAt: this.now() });
        if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
        return token;
      } finally {
        this.#inFlight.delete(key);
      }
    })();
    this.#inFlight.set(key, started);
    return started;
  }
}
