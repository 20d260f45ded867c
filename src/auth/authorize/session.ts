import type { Context } from 'koa';
import { readForm } from '../body.js';
import { randomToken, safeEqual } from '../crypto.js';
import { OAuthError } from '../errors.js';
import { readCookie, setCookie } from '../http.js';
import type { ResolvedOptions } from '../options.js';
import type { AuthStores, SessionRecord } from '../stores/types.js';
import { established, type Step } from './steps.js';

export const SESSION_COOKIE = 'portcullis_auth';

const SESSION_ID = /^[A-Za-z0-9_-]{20,64}$/;

/**
 * The browser session: an HttpOnly SameSite=Lax cookie, rotated at sign-in. Each pending request is an interaction
 * record bound to that session with its own CSRF token.
 */
export class BrowserSessions {
  private readonly cookiePath: string;
  /** Where the flow's own pages are served: their form posts come from this origin. */
  readonly siteOrigin: string;

  constructor(
    private readonly options: ResolvedOptions,
    private readonly stores: AuthStores,
  ) {
    this.cookiePath = new URL(options.endpoints.authorization).pathname;
    this.siteOrigin = new URL(options.baseUrl).origin;
  }

  /**
   * A signed-in session is a stored record; a browser that has not signed in is only its cookie's random id
   * (what its pending requests are bound to), so anonymous visits store no session.
   */
  async load(ctx: Context): Promise<SessionRecord | undefined> {
    const id = readCookie(ctx, SESSION_COOKIE);
    if (!id || !SESSION_ID.test(id)) return undefined;
    return (
      (await this.stores.sessions.get(id)) ?? {
        id,
        expiresAt: this.options.clock() + this.options.sessionTtl,
      }
    );
  }

  /** A new session cookie; stored only for a signed-in user. */
  async create(ctx: Context, identity?: { sub: string; name?: string }): Promise<SessionRecord> {
    const { options } = this;
    const now = options.clock();
    const session: SessionRecord = {
      id: randomToken(),
      expiresAt: now + options.sessionTtl,
      ...(identity === undefined ? {} : { sub: identity.sub, authTime: now }),
      ...(identity?.name === undefined ? {} : { name: identity.name }),
    };
    if (identity !== undefined) await this.stores.sessions.set(session.id, session, session.expiresAt);
    setCookie(ctx, SESSION_COOKIE, session.id, {
      secure: options.cookieSecure,
      path: this.cookiePath,
      maxAge: options.sessionTtl,
    });
    return session;
  }
}

/** GET /authorize: the browser's session, a new (anonymous) one for a first visit. */
export const bindBrowserSession: Step = {
  name: 'bind the browser session',
  async run(ctx, flow, { sessions }) {
    flow.session = (await sessions.load(ctx)) ?? (await sessions.create(ctx));
    return 'next';
  },
};

/**
 * Every form post of the flow's pages: same origin, strict form, a live interaction bound to this browser session,
 * and its CSRF token. A form posted from another session, another interaction, or without the token is refused
 * with 403 and issues nothing.
 */
export const checkFormPost: Step = {
  name: 'check the form post',
  async run(ctx, flow, { server, pages, sessions }) {
    const origin = ctx.get('Origin');
    if (origin && origin !== sessions.siteOrigin)
      return pages.error(ctx, 403, 'access_denied', 'the form was posted from another site');
    let form: Map<string, string>;
    try {
      form = await readForm(ctx.req);
    } catch (err) {
      const error = err instanceof OAuthError ? err : new OAuthError('invalid_request', 'unreadable form');
      return pages.error(ctx, error.status, error.code, error.message);
    }
    const session = await sessions.load(ctx);
    const id = form.get('interaction');
    const interaction = id === undefined ? undefined : await server.stores.interactions.get(id);
    const csrf = form.get('csrf') ?? '';
    if (
      !session ||
      !interaction ||
      // the copy kept for an upstream sign-in is only for its callback; posting it would fork the request
      interaction.upstream !== undefined ||
      interaction.sessionId !== session.id ||
      !safeEqual(csrf, interaction.csrf)
    ) {
      return pages.error(
        ctx,
        403,
        'access_denied',
        'this form has expired or was not sent from this browser; start again from the application',
      );
    }
    flow.form = form;
    flow.session = session;
    flow.interaction = interaction;
    return 'next';
  },
};

/**
 * The browser signs in as the identity an earlier step proved. A new session id at sign-in defeats session
 * fixation; the interaction follows the browser to it.
 */
export const signIn: Step = {
  name: 'sign in',
  async run(ctx, flow, { server, sessions }) {
    const interaction = established(flow, 'interaction');
    await server.stores.sessions.delete(established(flow, 'session').id);
    const session = await sessions.create(ctx, established(flow, 'identity'));
    const moved = { ...interaction, sessionId: session.id };
    await server.stores.interactions.set(moved.id, moved, moved.expiresAt);
    flow.session = session;
    flow.interaction = moved;
    return 'next';
  },
};
