import type { Middleware } from 'koa';
import type { ServerContext } from '../server-context.js';
import { UpstreamClient } from '../upstream/client.js';
import { findUpstreamAttempt, finishUpstreamSignIn, redirectToProvider } from '../upstream/sign-in.js';
import { checkParameters } from './checks.js';
import {
  continueAfterSignIn,
  findSignedInInteraction,
  readDecision,
  rememberConsent,
  requireSignIn,
  resumeSignedInSession,
  showConsentPage,
} from './consent.js';
import { issueCodeStep } from './issue.js';
import { askToSignIn, readCredentials, refuseLockedOut, verifyPasswordStep } from './login.js';
import { FlowPages, pageHeaders } from './pages.js';
import { checkRedirectUri, findClient, limitPerAddress, openInteraction, readParameters } from './request.js';
import { BrowserSessions, bindBrowserSession, checkFormPost, signIn } from './session.js';
import { type FlowServices, runSteps, type Step } from './steps.js';

/**
 * The authorization endpoint (OAuth 2.1 §4.1.1) and its login and consent pages, each endpoint a list of named
 * steps run in order until one answers (steps.ts).
 *
 * Errors come in two phases. Phase 1 (request.ts: client unknown, redirect URI missing or not registered) is shown
 * to the user as a page and never redirected. Phase 2 errors (checks.ts: response_type, PKCE, scope, resource) are
 * redirected to the validated redirect URI with state and iss — but only once the user has signed in, so an
 * attacker-registered client cannot use this server as an open redirector (OAuth 2.1 §7.12.2).
 *
 * Browser state (session.ts): an HttpOnly SameSite=Lax session cookie identifies the browser session (rotated at
 * sign-in); each pending request is an interaction record bound to that session with its own CSRF token. A form
 * posted from another session, another interaction, or without the token is refused with 403 and issues nothing.
 */
export const AUTHORIZATION_FLOW = {
  /** GET {base_url}/v1/authorize */
  authorize: [
    pageHeaders,
    limitPerAddress,
    readParameters,
    findClient,
    checkRedirectUri,
    checkParameters,
    bindBrowserSession,
    openInteraction,
    resumeSignedInSession,
    askToSignIn,
  ],
  /** POST {base_url}/v1/authorize/login */
  login: [
    pageHeaders,
    checkFormPost,
    readCredentials,
    refuseLockedOut,
    verifyPasswordStep,
    signIn,
    continueAfterSignIn,
  ],
  /** GET {base_url}/v1/authorize/consent?interaction=… (the page after sign-in) */
  consentPage: [pageHeaders, findSignedInInteraction, showConsentPage],
  /** POST {base_url}/v1/authorize/consent */
  consent: [pageHeaders, checkFormPost, requireSignIn, readDecision, rememberConsent, issueCodeStep],
  /** POST {base_url}/v1/authorize/upstream (the login page's button for the upstream provider) */
  upstreamStart: [pageHeaders, checkFormPost, redirectToProvider],
  /** GET {base_url}/v1/authorize/upstream/callback */
  upstreamCallback: [pageHeaders, findUpstreamAttempt, finishUpstreamSignIn, signIn, continueAfterSignIn],
} as const satisfies Record<string, readonly Step[]>;

export type FlowEndpoint = keyof typeof AUTHORIZATION_FLOW;

/** The Koa handler of each endpoint of the flow; the upstream ones only with an upstream provider. */
export function authorizationFlow(server: ServerContext) {
  const { options, stores } = server;
  const services: FlowServices = {
    server,
    pages: new FlowPages(options.issuer),
    sessions: new BrowserSessions(options, stores),
    upstream: options.upstream
      ? new UpstreamClient(options.upstream, options.endpoints.upstreamCallback, options.clock)
      : undefined,
  };
  const handler = (endpoint: FlowEndpoint): Middleware =>
    runSteps(endpoint, AUTHORIZATION_FLOW[endpoint], services);
  return {
    authorize: handler('authorize'),
    login: handler('login'),
    consentPage: handler('consentPage'),
    consent: handler('consent'),
    upstream: services.upstream
      ? { start: handler('upstreamStart'), callback: handler('upstreamCallback') }
      : undefined,
  };
}
