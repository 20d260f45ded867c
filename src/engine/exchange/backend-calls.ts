/**
 * The engine as the backend's HTTP client: after Envoy delivered the backend's answer, the calls the pipeline still
 * asks for — retries (`retry` around forward-request) and followed redirects (forward-request
 * follow-redirects="true") — made from the engine with the request as it was forwarded.
 */
import { headerValue, isEnvoyHeader, unforwardable } from '../../extproc/header-changes.js';
import {
  allowedMs,
  type BackendResponse,
  type ForwardedRequest,
  type PipelineRun,
  type PolicyServices,
  retryBudgetMs,
} from '../../policy/index.js';
import type { BackendRoute } from '../backend-routes.js';

/** What was sent to the backend, for the calls the engine makes itself (retry, follow-redirects). */
export interface SentRequest {
  readonly request: ForwardedRequest;
  readonly route: BackendRoute;
  /** The body forwarded (a policy's, or the client's when Envoy sent it buffered), to replay. */
  readonly body: Buffer | undefined;
  /** The request as the policies left it, before the backend's credentials: for a retry to another backend. */
  readonly beforeCredentials?: ForwardedRequest;
}

/** The engine's services (its HTTP client, its clock) and the request's (whose deadline bounds each wait). */
export interface CallServices {
  readonly engine: PolicyServices;
  readonly request: PolicyServices;
  /**
   * Before each retry: the request sent again, to the backend chosen again when it came from a pool (`retry` in the
   * backend section picks a backend again); undefined when none can take it (every one tripped), ending the retries.
   */
  readonly again?: (sent: SentRequest) => Promise<SentRequest | undefined>;
  /** After each call the engine makes: the answer, for the backend's circuit breaker. */
  readonly answered?: (sent: SentRequest, response: BackendResponse) => Promise<void>;
  /** After outbound: headers the client's answer gets besides (a pool's session cookie), never seen by policies. */
  readonly answerHeaders?: (run: PipelineRun) => readonly (readonly [string, string])[];
}

/**
 * The backend's answer after the engine's own calls: retried while the pipeline's retry asks, then redirects
 * followed. `replaced`: the answer is one the engine fetched, not the one Envoy holds. Throws when a call fails
 * (`code: 'TIMEOUT'` when it timed out).
 */
export async function retriedAndRedirected(
  run: PipelineRun,
  first: BackendResponse,
  sent: SentRequest,
  services: CallServices,
): Promise<{ readonly response: BackendResponse; readonly replaced: boolean }> {
  let response = first;
  let replaced = false;
  let current = sent;
  for (let attempt = 1; ; attempt++) {
    const delay = run.retryDelay(response, attempt);
    if (delay === undefined) break;
    if (attempt === 1) reserveRetries(run, sent, services.request);
    if (delay > 0) await services.engine.clock.sleep(allowedMs(services.request, delay));
    const next = services.again ? await services.again(current) : current;
    if (next === undefined) break;
    current = next;
    response = await callBackend(current, services);
    await services.answered?.(current, response);
    replaced = true;
  }
  const redirected = await followRedirects(response, current, services);
  return redirected ? { response: redirected, replaced: true } : { response, replaced };
}

/**
 * Before the engine's first retry of the backend call: Envoy is asked once to wait for all of them (the calls at
 * forward-request's timeout, the pauses), since it extends its wait for a phase only once.
 */
function reserveRetries(run: PipelineRun, sent: SentRequest, services: PolicyServices): void {
  const retry = run.run.retry;
  const timeoutMs = sent.request.forward.timeoutMs;
  if (retry === undefined) return;
  const pauses = {
    interval: retry.intervalSeconds,
    maxInterval: retry.maxIntervalSeconds,
    delta: retry.deltaSeconds,
    firstFast: retry.firstFastRetry,
  };
  // Envoy made the first call.
  allowedMs(services, retryBudgetMs(retry.count, timeoutMs, pauses) - timeoutMs);
}

/** Calls the backend again as forwarded (retry), from the engine: Envoy has already delivered its answer. */
async function callBackend(
  sent: SentRequest,
  services: CallServices,
  url?: string,
  method?: string,
): Promise<BackendResponse> {
  const { request, route, body } = sent;
  const answer = await services.engine.fetch({
    method: method ?? request.method,
    url: url ?? `${route.origin}${route.basePath}${pathOf(request)}`,
    headers: request.headers.filter(
      ([name]) => !unforwardable.has(name.toLowerCase()) && !isEnvoyHeader(name),
    ),
    ...(body && body.length > 0 && (method ?? request.method) !== 'GET' ? { body } : {}),
    timeoutMs: allowedMs(services.request, request.forward.timeoutMs),
  });
  return { status: answer.status, reason: answer.reason, headers: answer.headers, body: answer.body };
}

/** forward-request follow-redirects="true": the engine follows the backend's redirects (at most 10). */
async function followRedirects(
  response: BackendResponse,
  sent: SentRequest,
  services: CallServices,
): Promise<BackendResponse | undefined> {
  const { request, route } = sent;
  if (!request.forward.followRedirects) return undefined;
  let current = response;
  let url = `${route.origin}${route.basePath}${pathOf(request)}`;
  let method = request.method;
  let followed = false;
  for (let hop = 0; hop < 10 && redirectStatuses.has(current.status); hop++) {
    const location = headerValue(current.headers, 'location');
    if (location === undefined) break;
    url = new URL(location, url).toString();
    if (current.status === 303 || ((current.status === 301 || current.status === 302) && method === 'POST'))
      method = 'GET';
    current = await callBackend(sent, services, url, method);
    followed = true;
  }
  return followed ? current : undefined;
}

/** The forwarded path and query, always from "/". */
export function pathOf(request: ForwardedRequest): string {
  return request.pathAndQuery.startsWith('/') ? request.pathAndQuery : `/${request.pathAndQuery}`;
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);
