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
 * refresh token at the provider source's token endpoint, as its client, when it is near expiry; the new tokens are
 * written back (a provider that rotates refresh tokens invalidates the old one). The caller (the credential
 * manager's TokenCache) runs one refresh per user at a time in this process; an engine process that loses a race
 * with another one (its refresh token already rotated) takes the tokens the winner writes (looked for up to two
 * seconds, so a refresh token the provider really revoked fails that much later).
 */
export class DelegatedConnection {
  constructor(
    private readonly tokens: DelegatedTokens,
    private readonly client: ClientConfig,
    private readonly context: SourceContext,
  ) {}

  async token(user: string): Promise<IssuedToken> {
    const kept = await this.tokens.read(user);
    if (kept === undefined)
      throw new IdentityError(
        'unavailable',
        `user "${user}" has no upstream tokens: they have not signed in through the identity provider (or the tokens were lost)`,
      );
    const now = this.context.now();
    if (!nearExpiry(kept, now)) return { token: kept.accessToken, expiresAt: kept.expiresAt };
    if (kept.refreshToken === undefined)
      throw new IdentityError(
        'unavailable',
        `the upstream token of user "${user}" has expired and the provider granted no refresh token (request offline_access in auth.identityProvider.scopes)`,
      );
    try {
      return await this.#refresh(user, kept);
    } catch (error) {
      if (!(error instanceof IdentityError) || error.code !== 'endpoint-refused') throw error;
      return this.#afterLostRace(user, kept, error);
    }
  }

  /**
   * A refused refresh may be a race lost to another engine process that presented the same refresh token first
   * (the provider rotated it): that process writes the new tokens once its answer arrives, so they are looked for a
   * short while before the refusal is reported.
   */
  async #afterLostRace(
    user: string,
    kept: DelegatedTokenRecord,
    refusal: IdentityError,
  ): Promise<IssuedToken> {
    for (let read = 0; read < RACE_READS; read++) {
      const again = await this.tokens.read(user);
      if (
        again !== undefined &&
        again.refreshToken !== kept.refreshToken &&
        !nearExpiry(again, this.context.now())
      )
        return { token: again.accessToken, expiresAt: again.expiresAt };
      await delay(RACE_READ_INTERVAL_MS);
    }
    throw refusal;
  }

  async #refresh(user: string, kept: DelegatedTokenRecord): Promise<IssuedToken> {
    const form = new URLSearchParams([
      ['grant_type', 'refresh_token'],
      ['refresh_token', kept.refreshToken!],
    ]);
    const headers = await authenticateClient(this.client, this.context, form);
    const now = this.context.now();
    const issued = await callTokenEndpoint(
      {
        label: `${this.context.name} (refresh for user "${user}")`,
        url: this.client.tokenUrl,
        method: 'POST',
        headers,
        form,
      },
      now,
    );
    await this.tokens.write(user, {
      accessToken: issued.token,
      refreshToken: issued.refreshToken ?? kept.refreshToken!,
      expiresAt: issued.expiresAt,
      obtainedAt: now,
    });
    return { token: issued.token, expiresAt: issued.expiresAt };
  }
}

function nearExpiry(record: DelegatedTokenRecord, now: number): boolean {
  const margin = Math.min(REFRESH_MARGIN_MS, (record.expiresAt - record.obtainedAt) / 4);
  return now >= record.expiresAt - margin;
}
