import { setTimeout as delay } from 'node:timers/promises';
import type { DelegatedTokenRecord, DelegatedTokens } from '../state/delegated-tokens.js';
import { IdentityError } from './errors.js';
import type { IdentitySourceConfig } from './options.js';
import { authenticateClient } from './sources/client-credentials.js';
import type { SourceContext } from './sources/context.js';
import { callTokenEndpoint } from './token-endpoint.js';
import type { IssuedToken } from './token-source.js';

type ClientConfig = Extract<IdentitySourceConfig, { type: 'client-credentials' }>;

/** How often, and how far apart, the store is read again after a refused refresh (a race with another process). */
const RACE_READS = 8;
const RACE_READ_INTERVAL_MS = 250;

/** At most this long before expiry a kept token is refreshed (a quarter of a shorter lifetime). */
const REFRESH_MARGIN_MS = 60 * 1000;

/**
 * A user-delegated connection's token: the one the user obtained when signing in through the authorization
 * server's upstream provider (kept sealed in state/ by the authorization server), refreshed with the provider's
 * refresh token at the provider source's token endpoint, as its client, when it is near expiry, asking again for
 * the scope granted at sign-in; the new tokens are written back (a provider that rotates refresh tokens invalidates
 * the old one). A connection with its own scopes gets the user's refresh token narrowed to them (RFC 6749 §6); its
 * access tokens stay in the caller's cache, and only a rotated refresh token is written back.
 *
 * The caller (the credential manager's TokenCache) runs one fetch per user and scope at a time; refreshes of one
 * user are also serialized here, since connections of different scopes spend the same refresh token. An engine
 * process that loses a race with another one (its refresh token already rotated) takes what the winner writes
 * (looked for up to two seconds, so a refresh token the provider really revoked fails that much later).
 */
export class DelegatedConnection {
  /** The last refresh of each user in this process: the next one waits for it. */
  readonly #refreshing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly tokens: DelegatedTokens,
    private readonly client: ClientConfig,
    private readonly context: SourceContext,
  ) {}

  async token(user: string, scopes: readonly string[] = []): Promise<IssuedToken> {
    const kept = await this.#kept(user);
    if (scopes.length === 0 && !nearExpiry(kept, this.context.now()))
      return { token: kept.accessToken, expiresAt: kept.expiresAt };
    return this.#oneAtATime(user, () =>
      scopes.length === 0 ? this.#renewKept(user) : this.#narrowed(user, scopes.join(' ')),
    );
  }

  /**
   * Fails as token() would when the user's tokens are gone (they signed out: their grant was revoked): checked on
   * every call, so a token cached in this process is not used for a user who is no longer signed in.
   */
  async assertKept(user: string): Promise<void> {
    await this.#kept(user);
  }

  async #kept(user: string): Promise<DelegatedTokenRecord> {
    const kept = await this.tokens.read(user);
    if (kept === undefined)
      throw new IdentityError(
        'unavailable',
        `user "${user}" has no upstream tokens: they have not signed in through the identity provider, signed out, or the tokens were lost`,
      );
    return kept;
  }

  #withRefreshToken(user: string, kept: DelegatedTokenRecord): string {
    if (kept.refreshToken === undefined)
      throw new IdentityError(
        'unavailable',
        `the upstream token of user "${user}" has expired and the provider granted no refresh token (request offline_access in auth.identityProvider.scopes)`,
      );
    return kept.refreshToken;
  }

  async #oneAtATime<T>(user: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#refreshing.get(user) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.#refreshing.set(user, next);
    try {
      return await next;
    } finally {
      if (this.#refreshing.get(user) === next) this.#refreshing.delete(user);
    }
  }

  /** The kept token, refreshed (read again first: the refresh before this one may have renewed it). */
  async #renewKept(user: string): Promise<IssuedToken> {
    let kept = await this.#kept(user);
    if (!nearExpiry(kept, this.context.now())) return { token: kept.accessToken, expiresAt: kept.expiresAt };
    let issued: Awaited<ReturnType<typeof callTokenEndpoint>>;
    const now = this.context.now();
    try {
      issued = await this.#refresh(user, this.#withRefreshToken(user, kept), kept.scope);
    } catch (error) {
      if (!(error instanceof IdentityError) || error.code !== 'endpoint-refused') throw error;
      // The winner renewed the kept token (take it) or only rotated the refresh token (use the new one).
      kept = await this.#afterLostRace(user, kept.refreshToken!, error);
      if (!nearExpiry(kept, this.context.now()))
        return { token: kept.accessToken, expiresAt: kept.expiresAt };
      issued = await this.#refresh(user, this.#withRefreshToken(user, kept), kept.scope);
    }
    await this.tokens.write(user, {
      accessToken: issued.token,
      refreshToken: issued.refreshToken ?? kept.refreshToken!,
      expiresAt: issued.expiresAt,
      obtainedAt: now,
      ...(kept.scope === undefined ? {} : { scope: kept.scope }),
    });
    return { token: issued.token, expiresAt: issued.expiresAt };
  }

  /** A token for `scope` from the user's refresh token; a rotated refresh token is written back, the rest kept. */
  async #narrowed(user: string, scope: string): Promise<IssuedToken> {
    let kept = await this.#kept(user);
    let issued: Awaited<ReturnType<typeof callTokenEndpoint>>;
    try {
      issued = await this.#refresh(user, this.#withRefreshToken(user, kept), scope);
    } catch (error) {
      if (!(error instanceof IdentityError) || error.code !== 'endpoint-refused') throw error;
      // Spent by another process a moment ago: once it writes the rotated refresh token, use that one.
      kept = await this.#afterLostRace(user, kept.refreshToken!, error);
      issued = await this.#refresh(user, this.#withRefreshToken(user, kept), scope);
    }
    if (issued.refreshToken !== undefined && issued.refreshToken !== kept.refreshToken)
      await this.tokens.write(user, { ...kept, refreshToken: issued.refreshToken });
    return { token: issued.token, expiresAt: issued.expiresAt };
  }

  /**
   * A refused refresh may be a race lost to another engine process that presented the same refresh token first
   * (the provider rotated it): that process writes the new tokens once its answer arrives, so they are looked for a
   * short while before the refusal is reported.
   */
  async #afterLostRace(user: string, spent: string, refusal: IdentityError): Promise<DelegatedTokenRecord> {
    for (let read = 0; read < RACE_READS; read++) {
      const again = await this.tokens.read(user);
      if (again?.refreshToken !== undefined && again.refreshToken !== spent) return again;
      await delay(RACE_READ_INTERVAL_MS);
    }
    throw refusal;
  }

  async #refresh(user: string, refreshToken: string, scope: string | undefined) {
    const form = new URLSearchParams([
      ['grant_type', 'refresh_token'],
      ['refresh_token', refreshToken],
      ...(scope === undefined || scope === '' ? [] : [['scope', scope] as [string, string]]),
    ]);
    const headers = await authenticateClient(this.client, this.context, form);
    return callTokenEndpoint(
      {
        label: `${this.context.name} (refresh for user "${user}")`,
        url: this.client.tokenUrl,
        method: 'POST',
        headers,
        form,
      },
      this.context.now(),
    );
  }
}

function nearExpiry(record: DelegatedTokenRecord, now: number): boolean {
  const margin = Math.min(REFRESH_MARGIN_MS, (record.expiresAt - record.obtainedAt) / 4);
  return now >= record.expiresAt - margin;
}
