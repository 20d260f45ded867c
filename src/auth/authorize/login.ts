import type { Context } from 'koa';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../crypto.js';
import type { AuthUser, ResolvedOptions } from '../options.js';
import { type LoginView, loginPage } from '../pages.js';
import type { SecurityEventFields } from '../security-events.js';
import type { InteractionRecord } from '../stores/types.js';
import { established, type FlowServices, type Step, type StepResult } from './steps.js';

/**
 * Sign-in with a configured user's password: the login page, and POST {base_url}/v1/authorize/login with
 * per-account and per-address failure limits (a locked-out caller gets 429 before its password is checked).
 */

/** One password sign-in, as read from the form. */
export interface PasswordAttempt {
  username: string;
  password: string;
  /** The account the name names, if any. */
  user: AuthUser | undefined;
  /** The security events' fields: a name only when it is an account (a wrong one may be a password). */
  event: SecurityEventFields & { address: string };
  /** The failure counters of the account name and of the caller's address. */
  accountKey: string;
  addressKey: string;
}

/** The choices of the login page: passwords and/or the upstream provider's button. */
function loginChoices(options: ResolvedOptions): Pick<LoginView, 'passwords' | 'upstream'> {
  return {
    passwords: options.users.size > 0 || options.upstream === undefined,
    ...(options.upstream
      ? { upstream: { action: options.endpoints.upstreamStart, name: options.upstream.name } }
      : {}),
  };
}

async function showLogin(
  ctx: Context,
  status: number,
  interaction: InteractionRecord,
  { server, pages }: FlowServices,
  shown: { clientName?: string; username?: string; error?: string } = {},
): Promise<StepResult> {
  const { options } = server;
  const client = shown.clientName === undefined ? await server.clients.get(interaction.clientId) : undefined;
  return pages.render(
    ctx,
    status,
    loginPage({
      action: options.endpoints.login,
      interaction: interaction.id,
      csrf: interaction.csrf,
      clientName: shown.clientName ?? client?.metadata.client_name ?? `client ${interaction.clientId}`,
      ...(shown.username === undefined ? {} : { username: shown.username }),
      ...loginChoices(options),
      ...(shown.error === undefined ? {} : { error: shown.error }),
    }),
  );
}

/** GET /authorize for a browser not signed in: the request is stored and the login page shown. */
export const askToSignIn: Step = {
  name: 'ask to sign in',
  async run(ctx, flow, services) {
    const interaction = established(flow, 'interaction');
    const client = established(flow, 'client');
    await services.server.stores.interactions.set(interaction.id, interaction, interaction.expiresAt);
    return showLogin(ctx, 200, interaction, services, {
      clientName: client.metadata.client_name ?? `client ${client.clientId}`,
    });
  },
};

export const readCredentials: Step = {
  name: 'read the credentials',
  async run(ctx, flow, { server }) {
    const { options } = server;
    const form = established(flow, 'form');
    const username = form.get('username') ?? '';
    const user = options.users.get(username);
    const address = options.clientAddress(ctx);
    flow.passwordAttempt = {
      username,
      password: form.get('password') ?? '',
      user,
      event: { address, client_id: established(flow, 'interaction').clientId, ...(user ? { username } : {}) },
      accountKey: `login:account:${username}`,
      addressKey: `login:address:${address}`,
    };
    return 'next';
  },
};

export const refuseLockedOut: Step = {
  name: 'refuse a locked-out account or address',
  async run(ctx, flow, services) {
    const { options, stores } = services.server;
    const { limits } = options;
    const attempt = established(flow, 'passwordAttempt');
    const [account, perAddress] = await Promise.all([
      stores.counters.get(attempt.accountKey),
      stores.counters.get(attempt.addressKey),
    ]);
    const blocked = [
      account && account.count >= limits.loginFailuresPerAccount
        ? { limit: 'login.account' as const, ...account }
        : undefined,
      perAddress && perAddress.count >= limits.loginFailuresPerAddress
        ? { limit: 'login.address' as const, ...perAddress }
        : undefined,
    ].find((c) => c !== undefined);
    if (!blocked) return 'next';
    const retryAfter = Math.max(1, blocked.resetAt - options.clock());
    options.securityEvent('rate_limit.refused', {
      ...attempt.event,
      limit: blocked.limit,
      retry_after: retryAfter,
    });
    ctx.set('Retry-After', String(retryAfter));
    return showLogin(ctx, 429, established(flow, 'interaction'), services, {
      username: attempt.username,
      error: 'Too many failed sign-in attempts. Try again later.',
    });
  },
};

export const verifyPasswordStep: Step = {
  name: 'verify the password',
  async run(ctx, flow, services) {
    const { options, stores } = services.server;
    const { limits } = options;
    const attempt = established(flow, 'passwordAttempt');
    const { user, event } = attempt;
    const ok = await verifyPassword(attempt.password, user?.passwordHash ?? DUMMY_PASSWORD_HASH);
    if (user && ok) {
      await stores.counters.reset(attempt.accountKey);
      options.securityEvent('login.succeeded', event);
      flow.identity = { sub: user.username };
      return 'next';
    }
    const [accountNow, addressNow] = await Promise.all([
      stores.counters.increment(attempt.accountKey, limits.loginWindowSeconds),
      stores.counters.increment(attempt.addressKey, limits.loginWindowSeconds),
    ]);
    options.securityEvent('login.failed', { ...event, reason: user ? 'wrong_password' : 'unknown_user' });
    // The failure that reaches a limit starts the lockout; later refusals are rate_limit.refused.
    for (const [limit, counter, max] of [
      ['login.account', accountNow, limits.loginFailuresPerAccount],
      ['login.address', addressNow, limits.loginFailuresPerAddress],
    ] as const) {
      if (counter.count === max) {
        options.securityEvent('login.locked', {
          ...event,
          limit,
          retry_after: Math.max(1, counter.resetAt - options.clock()),
        });
      }
    }
    return showLogin(ctx, 401, established(flow, 'interaction'), services, {
      username: attempt.username,
      error: 'The user name or password is not correct.',
    });
  },
};
