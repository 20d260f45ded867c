/**
 * The answers the engine gives itself instead of forwarding: its refusals (each kind with the reason the access log
 * and Envoy's response details carry), a policy's answer as an immediate response, and on-error's answer in place
 * of Envoy's local reply.
 */
import type { MatchResult } from '../../catalog/catalog.js';
import type { NormalizedPath } from '../../catalog/request-path.js';
import type { ContinueResult, RespondResult } from '../../extproc/exchange.js';
import { diffHeaders, framingHeaders } from '../../extproc/header-changes.js';
import type { HeaderChange } from '../../extproc/headers.js';
import type { FinalResponse, Pipeline, PipelineRun } from '../../policy/index.js';
import type { BackendRoute } from '../backend-routes.js';
import type { Step } from './state.js';
import type { ExchangeRecord, ExchangeSummary } from './summary.js';

/**
 * An answer the engine gives itself, before or instead of any policy: API Management's JSON error shape with a
 * message safe to show; why goes to the access log (`lastError`) and to Envoy's response details.
 */
export interface Refusal {
  readonly status: number;
  readonly message: string;
  readonly lastError?: ExchangeSummary['lastError'];
  readonly details: string;
}

/**
 * A request on a route named `portcullis:<api id>` (contract.ts) that names no API of the configuration (500: the
 * gateway is misconfigured), or whose path is not under that API's URL suffix (404, as for a URL of no
 * operation). The access log says which route and why; the client is told nothing of the configuration.
 */
export function routeRefusal(
  routeName: string,
  found: { readonly kind: 'unknown-api' } | { readonly kind: 'outside-suffix'; readonly urlSuffix: string },
): Refusal {
  const lastError =
    found.kind === 'unknown-api'
      ? {
          source: 'route-name',
          reason: 'RouteNamesUnknownApi',
          message: `Envoy route "${routeName}" names an API the configuration does not have`,
        }
      : {
          source: 'route-name',
          reason: 'PathOutsideNamedApi',
          message: `Envoy route "${routeName}" took a path outside the API's URL suffix "/${found.urlSuffix}"`,
        };
  const [status, message] =
    found.kind === 'unknown-api' ? [500, 'Internal server error'] : [404, 'Resource not found'];
  return { status, message, lastError, details: `portcullis_${lastError.reason}` };
}

/**
 * A request under the URL suffix of a header- or query-versioned set that names a version the set does not have
 * (or none, and the set has no version ""): API Management's 404 for a URL of no API. The access log says which
 * version was asked for.
 */
export function versionRefusal(found: Extract<MatchResult<Pipeline>, { kind: 'no-version' }>): Refusal {
  const where = `${found.by === 'header' ? 'header' : 'query parameter'} ${found.key}`;
  const lastError = {
    source: 'api-version',
    reason: found.requested === undefined ? 'ApiVersionMissing' : 'ApiVersionNotFound',
    message:
      found.requested === undefined
        ? `no ${where} naming the version of /${found.urlSuffix}, and no version "" (Original) to default to`
        : `no version ${JSON.stringify(found.requested)} (${where}) of /${found.urlSuffix}`,
  };
  return { status: 404, message: 'Resource not found', lastError, details: `portcullis_${lastError.reason}` };
}

/**
 * A backend a policy computed (`set-backend-service` with an expression) that the Envoy in front, routing by its
 * own routes, would not reach: forwarding would send the request to the API's backend instead, past the policy's
 * choice. 500, as for any misconfiguration; the access log says which backend.
 */
export function unroutedBackendRefusal(route: BackendRoute, apiServiceUrl: string): Refusal {
  return {
    status: 500,
    message: 'Internal server error',
    lastError: {
      source: 'set-backend-service',
      reason: 'BackendNotRoutable',
      message: `the policies chose ${route.origin}, but the Envoy in front routes by its own routes (--backend-routing envoy-route) to ${new URL(apiServiceUrl).origin}`,
    },
    details: 'portcullis_BackendNotRoutable',
  };
}

/** A path the engine will not resolve (see catalog/request-path.ts): 400 before any API or policy sees it. */
export function pathRefusal(refusal: Extract<NormalizedPath, { ok: false }>): Refusal {
  return {
    status: 400,
    message: `Bad request: ${refusal.message}.`,
    lastError: { source: 'request-path', reason: refusal.reason, message: refusal.message },
    details: `portcullis_${refusal.reason}`,
  };
}

/** Over the largest request body a pipeline is given (`limits.maxRequestBodyBytes`), when there is one. */
export function bodyTooLarge(engine: { readonly maxRequestBodyBytes?: number }, bytes: number): boolean {
  const limit = engine.maxRequestBodyBytes;
  return limit !== undefined && bytes > limit;
}

/** 413 with API Management's error shape; no policy runs on a body it was not given whole. */
export function largeBodyRefusal(limit: number | undefined): Refusal {
  return {
    status: 413,
    message: `The request body is larger than this operation accepts${limit === undefined ? '' : ` (${limit} bytes)`}.`,
    details: 'portcullis_request_body_too_large',
  };
}

/** A refusal as Envoy's immediate response: the request id (when the engine made it) first, the trace id last. */
export function refusalResult(
  refusal: Refusal,
  requestIdHeader: readonly HeaderChange[],
  traceHeaders: readonly HeaderChange[],
): RespondResult {
  return {
    action: 'respond',
    status: refusal.status,
    headers: [...requestIdHeader, { name: 'content-type', value: 'application/json' }, ...traceHeaders],
    body: Buffer.from(JSON.stringify({ statusCode: refusal.status, message: refusal.message })),
    details: refusal.details,
  };
}

/** Envoy forwards only well-formed requests; this is for an ext_proc client that is not Envoy, or a bug in one. */
export const malformedRequest: FinalResponse = {
  status: 400,
  reason: 'Bad Request',
  headers: [['content-type', 'application/json']],
  body: Buffer.from(JSON.stringify({ statusCode: 400, message: 'The request URL is malformed.' })),
  bodyChanged: true,
};

/** The authorization server's refusal in front of an MCP server API (mcp-access.ts), with its bearer challenge. */
export function bearerRefusal(refused: {
  readonly status: 401 | 403;
  readonly challenge?: string | undefined;
  readonly message: string;
}): FinalResponse {
  return {
    status: refused.status,
    reason: refused.status === 401 ? 'Unauthorized' : 'Forbidden',
    headers: [
      ['content-type', 'application/json'],
      ...(refused.challenge === undefined ? [] : [['www-authenticate', refused.challenge] as const]),
    ],
    body: Buffer.from(JSON.stringify({ statusCode: refused.status, message: refused.message })),
    bodyChanged: true,
  };
}

/** The engine answers with this response, whole (a policy's, or one it fetched itself). */
export function answeredWhole(
  response: FinalResponse,
  run: PipelineRun | undefined,
  record: ExchangeRecord,
): Step {
  record.responded(response.status);
  return {
    state: { kind: 'answered', run },
    result: immediateResponse(response, run, record.traceHeaders()),
  };
}

/** A response the engine sends whole as Envoy's immediate response. */
function immediateResponse(
  response: FinalResponse,
  run: PipelineRun | undefined,
  traceHeaders: readonly HeaderChange[],
): RespondResult {
  return {
    action: 'respond',
    status: response.status,
    headers: [
      ...response.headers
        .filter(([name]) => !framingHeaders.has(name.toLowerCase()))
        .map(([name, value]) => ({ name: name.toLowerCase(), value, append: true })),
      ...traceHeaders,
    ],
    body: response.body,
    details: `portcullis_${run?.context.lastError?.reason || 'policy_response'}`,
  };
}

/**
 * Turns Envoy's local reply (backend unreachable, timed out) into on-error's answer by mutating it, not by a new
 * immediate response: Envoy would pass that through its local-reply mappers again, which rewrite replies to
 * backend failures (see the bootstrap) and would undo on-error's status and body.
 */
export function localReplyReplacement(response: FinalResponse, current: [string, string][]): ContinueResult {
  const { set, remove } = diffHeaders(current, response.headers);
  return {
    action: 'continue',
    headers: [{ name: ':status', value: String(response.status) }, ...set],
    removeHeaders: remove,
    body: response.body,
  };
}

/** The token a backend entity's managed-identity credential needs could not be obtained: 500, as for a policy's. */
export function backendCredentialRefusal(backendId: string, error: unknown): Refusal {
  return {
    status: 500,
    message: 'Internal server error',
    lastError: {
      source: 'backend-credentials',
      reason: 'BackendCredentialUnavailable',
      message: `the credentials of backend "${backendId}" could not be obtained: ${error instanceof Error ? error.message : String(error)}`,
    },
    details: 'portcullis_BackendCredentialUnavailable',
  };
}
