import type { Context } from 'koa';
import { errorPage, type RenderedPage } from '../pages.js';
import type { InteractionRecord } from '../stores/types.js';
import type { Step } from './steps.js';

/** How the flow answers a browser: pages (src/auth/pages.ts renders them) and redirects. */
export class FlowPages {
  constructor(private readonly issuer: string) {}

  /** Every answer of the flow: never cached, never framed, no Referer to other sites. */
  headers(ctx: Context): void {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Pragma', 'no-cache');
    ctx.set('X-Frame-Options', 'DENY');
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on the pages' own form posts,
    // which the same-origin check must refuse. Cross-origin requests still get no Referer.
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Content-Type-Options', 'nosniff');
  }

  render(ctx: Context, status: number, rendered: RenderedPage): 'answered' {
    ctx.set('Content-Security-Policy', rendered.csp);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = rendered.html;
    return 'answered';
  }

  /** An error shown to the user, never redirected: the request could not be verified enough to send it back. */
  error(ctx: Context, status: number, code: string, message: string): 'answered' {
    return this.render(ctx, status, errorPage(code, message));
  }

  /** 303 after a POST (never 307, OAuth 2.1 §7.5.4). */
  seeOther(ctx: Context, location: string): 'answered' {
    ctx.status = 303;
    ctx.set('Location', location);
    ctx.body = '';
    return 'answered';
  }

  /** The authorization response to the client's redirect URI, with `iss` (RFC 9207). */
  redirect(ctx: Context, target: string, params: Record<string, string | undefined>): 'answered' {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(params)) if (value !== undefined) query.set(name, value);
    query.set('iss', this.issuer);
    return this.seeOther(ctx, `${target}${target.includes('?') ? '&' : '?'}${query}`);
  }

  /** An error for the client (phase 2, or the user's refusal), redirected with the request's state. */
  redirectError(
    ctx: Context,
    interaction: InteractionRecord,
    error: { code: string; description: string },
  ): 'answered' {
    return this.redirect(ctx, interaction.redirectTarget, {
      error: error.code,
      error_description: error.description,
      state: interaction.state,
    });
  }
}

export const pageHeaders: Step = {
  name: 'page headers',
  async run(ctx, _flow, { pages }) {
    pages.headers(ctx);
    return 'next';
  },
};
