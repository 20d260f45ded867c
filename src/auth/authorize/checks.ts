import { OAuthError } from '../errors.js';
import type { ResolvedOptions } from '../options.js';
import { PKCE_VALUE } from '../pkce.js';
import { canonicalResource } from '../tokens.js';
import type { CheckedRequest } from './request.js';
import { established, type Step } from './steps.js';

/**
 * Phase 2 of GET {base_url}/v1/authorize: response_type, PKCE, scope and resource. The first failure is kept,
 * not shown: it is redirected to the validated redirect URI with state and iss, but only once the user has signed
 * in, so an attacker-registered client cannot use this server as an open redirector (OAuth 2.1 §7.12.2).
 */
export const checkParameters: Step = {
  name: 'check the parameters',
  async run(_ctx, flow, { server }) {
    flow.checked = checkRequest(server.options, established(flow, 'params'));
    return 'next';
  },
};

function checkRequest(options: ResolvedOptions, params: Map<string, string>): CheckedRequest {
  const responseType = params.get('response_type');
  if (responseType === undefined)
    return { error: new OAuthError('invalid_request', 'response_type is required') };
  if (responseType !== 'code') {
    return {
      error: new OAuthError('unsupported_response_type', `response_type "${responseType}" is not supported`),
    };
  }
  const pkce = checkPkce(options, params);
  if (pkce instanceof OAuthError) return { error: pkce };
  const scope = checkScope(options, params);
  if (scope instanceof OAuthError) return { error: scope };
  const resource = checkResource(options, params);
  if (resource instanceof OAuthError) return { error: resource };
  return { ...pkce, scope, resource };
}

function checkPkce(
  options: ResolvedOptions,
  params: Map<string, string>,
): { challenge: string; method: 'S256' | 'plain' } | OAuthError {
  const challenge = params.get('code_challenge');
  if (challenge === undefined) return new OAuthError('invalid_request', 'code_challenge is required (PKCE)');
  // OAuth 2.1 §4.1.1: an absent method means plain.
  const method = params.get('code_challenge_method') ?? 'plain';
  const methods = options.allowPlainPkce ? ['S256', 'plain'] : ['S256'];
  if (!params.has('code_challenge_method') && !methods.includes('plain')) {
    return new OAuthError(
      'invalid_request',
      'code_challenge_method is required and must be S256 (without it the method is plain, which this server refuses)',
    );
  }
  if (!methods.includes(method)) {
    return new OAuthError(
      'invalid_request',
      `code_challenge_method must be ${methods.join(' or ')}, got "${method}"`,
    );
  }
  if (!PKCE_VALUE.test(challenge)) {
    return new OAuthError(
      'invalid_request',
      'code_challenge must be 43-128 characters of A-Z a-z 0-9 - . _ ~',
    );
  }
  return { challenge, method: method as 'S256' | 'plain' };
}

function checkScope(options: ResolvedOptions, params: Map<string, string>): string[] | OAuthError {
  // Any scope the server supports now (products change on reload), whatever the client registered: MCP clients
  // register with the first challenge's scope — the minimal one for their first request (MCP 2025-11-25 scope
  // selection) — and are asked for more with 403 insufficient_scope, which sends the user to authorize the wider
  // scope (the TypeScript and Python SDKs' step-up). A registered scope is self-asserted by an open registration
  // (or a client's own metadata document) and bounds nothing; the user consents to each request's scopes.
  const allowed = options.scopes;
  const requested = params.get('scope');
  const scope =
    requested === undefined ? allowed : [...new Set(requested.split(' ').filter((s) => s !== ''))];
  const unknown = scope.filter((s) => !allowed.includes(s));
  if (unknown.length > 0)
    return new OAuthError('invalid_scope', `unknown or unregistered scope: ${unknown.join(' ')}`);
  return scope;
}

function checkResource(options: ResolvedOptions, params: Map<string, string>): string | OAuthError {
  const requested = params.get('resource');
  const resource =
    requested === undefined
      ? options.resources[0]!
      : options.resources.find((r) => r === canonicalResource(requested));
  if (resource === undefined)
    return new OAuthError('invalid_target', `resource "${requested}" is not served by this server`);
  return resource;
}
