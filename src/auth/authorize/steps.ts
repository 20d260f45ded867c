import type { Context, Middleware } from 'koa';
import type { ServerContext } from '../server-context.js';
import type { ClientRecord, InteractionRecord, SessionRecord } from '../stores/types.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { PasswordAttempt } from './login.js';
import type { FlowPages } from './pages.js';
import type { CheckedRequest } from './request.js';
import type { BrowserSessions } from './session.js';

/** A step answers the request, which ends the flow, or hands it to the next step. */
export type StepResult = 'next' | 'answered';

/**
 * One named step of an endpoint of the authorization flow. An endpoint is a list of steps (index.ts), the way
 * node-oidc-provider composes its actions; a step reads what earlier steps established from the flow state.
 */
export interface Step {
  readonly name: string;
  run(ctx: Context, flow: FlowState, services: FlowServices): Promise<StepResult>;
}

/** What every step may use; built once per server. */
export interface FlowServices {
  readonly server: ServerContext;
  readonly pages: FlowPages;
  readonly sessions: BrowserSessions;
  /** Only when an upstream OpenID Connect provider is configured (its routes exist only then). */
  readonly upstream: UpstreamClient | undefined;
}

/** What the steps of one request have established so far. */
export interface FlowState {
  /** The authorization request's query parameters. */
  params?: Map<string, string>;
  client?: ClientRecord;
  /** The registered redirect URI the request resolved to (phase 1: only then may errors be redirected). */
  redirectTarget?: string;
  /** The phase 2 checks: the request's values, or the error delivered after sign-in. */
  checked?: CheckedRequest;
  /** A posted form of the flow's pages. */
  form?: Map<string, string>;
  /** The browser session; a signed-in one after the sign-in step. */
  session?: SessionRecord;
  /** The pending authorization request. */
  interaction?: InteractionRecord;
  /** A password sign-in as read from the form. */
  passwordAttempt?: PasswordAttempt;
  /** Who proved who they are (a password, an upstream provider), before the session is signed in. */
  identity?: { sub: string; name?: string };
  /** The upstream attempt a callback answers. */
  upstreamAttempt?: NonNullable<InteractionRecord['upstream']>;
}

/** The value an earlier step established; a TypeError when the lists in index.ts put a step before its source. */
export function established<K extends keyof FlowState>(flow: FlowState, key: K): NonNullable<FlowState[K]> {
  const value = flow[key];
  if (value === undefined)
    throw new TypeError(`authorization flow: a step reads "${key}" before any step established it`);
  return value as NonNullable<FlowState[K]>;
}

/** The Koa handler of an endpoint: runs its steps in order until one answers. */
export function runSteps(endpoint: string, steps: readonly Step[], services: FlowServices): Middleware {
  return async (ctx) => {
    const flow: FlowState = {};
    for (const step of steps) if ((await step.run(ctx, flow, services)) === 'answered') return;
    throw new TypeError(`authorization flow: no step of ${endpoint} answered`);
  };
}
