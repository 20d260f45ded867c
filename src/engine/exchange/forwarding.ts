/**
 * What the engine tells Envoy when the request goes on: the header (and body) mutations that send it to the backend
 * the policies chose, or on to Envoy's own routes, or that ask for its body first; and outbound's changes to the
 * backend's answer.
 */
import { backendSelectionHeader, upstreamTimeoutHeader } from '../../envoy/contract.js';
import type { ContinueResult, PhaseRequests } from '../../extproc/exchange.js';
import { diffHeaders, isEnvoyHeader } from '../../extproc/header-changes.js';
import { firstHeader, type HeaderChange, type HeaderFields } from '../../extproc/headers.js';
import type { FinalResponse, ForwardedRequest } from '../../policy/index.js';
import type { BackendRoute, BackendRoutes } from '../backend-routes.js';
import { type BackendRouting, routedByEnvoy } from '../backend-routing.js';
import type { AdmittedRequest } from './admission.js';
import { pathOf } from './backend-calls.js';
import { type Refusal, unroutedBackendRefusal } from './refusals.js';

/** A URL that is no API's: on to Envoy's routes, with the normalised path, and no later phase asked for. */
export function notAnApiResult(
  requestIdHeader: readonly HeaderChange[],
  strippedHeaders: readonly string[],
  route: { readonly pathname: string; readonly pathChanged: boolean },
  search: string,
): ContinueResult {
  return {
    action: 'continue',
    headers: route.pathChanged
      ? [...requestIdHeader, { name: ':path', value: `${route.pathname}${search}` }]
      : requestIdHeader,
    removeHeaders: strippedHeaders,
    // A client's routing header may have picked the route, or the raw path did: pick again without them.
    clearRouteCache: strippedHeaders.length > 0 || route.pathChanged,
    next: { requestBody: false, responseHeaders: false, responseBody: false },
  };
}

/** The request length Envoy declared, when it declared one. */
export function declaredLength(headers: HeaderFields): number | undefined {
  const declared = firstHeader(headers, 'content-length');
  return declared === undefined ? undefined : Number(declared);
}

/** Asks Envoy for the request body (buffered) before anything runs. */
export function bodyRequest(
  request: AdmittedRequest,
  declared: boolean,
  next: PhaseRequests,
): ContinueResult {
  return {
    action: 'continue',
    headers: request.requestIdHeader,
    removeHeaders: request.strippedHeaders,
    next: declared ? next : { ...next, requestBodyLengthUnknown: true },
  };
}

/**
 * Forwards the request to the backend of the policies' choice (a named backend, a URL, or the API's service URL),
 * unless the Envoy in front, routing by its own routes, would not reach it.
 */
export function forwardTo(
  gateway: { readonly routes: BackendRoutes; readonly backendRouting?: BackendRouting },
  admitted: AdmittedRequest,
  request: ForwardedRequest,
  clientMethod: string,
  /** The MCP client's `Authorization` the engine checked (mcp-access.ts): for the gateway, never forwarded. */
  clientToken?: string,
):
  | { readonly kind: 'refused'; readonly refusal: Refusal }
  | ({ readonly kind: 'forward'; readonly route: BackendRoute } & ReturnType<typeof forwardMutation>) {
  const { api } = admitted;
  const route =
    request.backend.backendId !== undefined
      ? gateway.routes.forBackendId(request.backend.backendId)
      : gateway.routes.forUrl(request.backend.baseUrl ?? api.serviceUrl, api.id);
  if (gateway.backendRouting === 'envoy-route' && !routedByEnvoy(route.origin, api.serviceUrl))
    return { kind: 'refused', refusal: unroutedBackendRefusal(route, api.serviceUrl) };
  return {
    kind: 'forward',
    route,
    ...forwardMutation(admitted, request, route, gateway.backendRouting, clientMethod, clientToken),
  };
}

/**
 * The mutations that forward the request as the policies left it; `body` is the one they made, when they changed
 * it (Envoy forwards the client's otherwise).
 */
function forwardMutation(
  admitted: AdmittedRequest,
  request: ForwardedRequest,
  route: BackendRoute,
  backendRouting: BackendRouting | undefined,
  clientMethod: string,
  clientToken: string | undefined,
): { readonly result: ContinueResult; readonly body: Buffer | undefined } {
  let pathAndQuery = pathOf(request);
  // `GET /<suffix>` with nothing after it reaches the service URL itself, not the service URL plus "/": a SOAP
  // endpoint such as …/calculator.asmx often refuses the trailing slash.
  if (
    admitted.requestedApiRoot &&
    route.basePath !== '' &&
    (pathAndQuery === '/' || pathAndQuery.startsWith('/?'))
  ) {
    pathAndQuery = pathAndQuery.slice(1);
  }
  // Policies may not steer Envoy itself (retries, timeouts, routing): its own headers are the engine's alone.
  const { set, remove } = diffHeaders(
    admitted.originalHeaders.filter(([name]) => !isEnvoyHeader(name)),
    request.headers.filter(([name]) => !isEnvoyHeader(name)),
  );
  // Under `envoy-route` Envoy keeps the route it matched on the client's path (the API's): re-matching on the
  // path the engine rewrote would miss it, and no route reads the routing header.
  const followsChoice = backendRouting !== 'envoy-route';
  const changes: HeaderChange[] = [
    { name: ':path', value: `${route.basePath}${pathAndQuery}` },
    ...(followsChoice ? [{ name: backendSelectionHeader, value: route.cluster }] : []),
    // forward-request's timeout (API Management's default 300 s) bounds the whole backend call.
    { name: upstreamTimeoutHeader, value: String(request.forward.timeoutMs) },
    ...(request.method !== clientMethod ? [{ name: ':method', value: request.method }] : []),
    ...(route.authority ? [{ name: ':authority', value: route.authority }] : []),
    ...set,
  ];
  // Unless a policy set its own credential, the client's token stays at the gateway.
  const authorization = request.headers.find(([name]) => name.toLowerCase() === 'authorization')?.[1];
  if (clientToken !== undefined && authorization === clientToken) remove.push('authorization');
  const body = request.bodyChanged ? (request.body ?? Buffer.alloc(0)) : undefined;
  if (body) changes.push({ name: 'content-length', value: String(body.length) });
  const result: ContinueResult = {
    action: 'continue',
    headers: changes,
    removeHeaders: [
      ...(followsChoice
        ? admitted.strippedHeaders.filter((name) => name !== backendSelectionHeader)
        : admitted.strippedHeaders),
      ...remove,
    ],
    ...(body ? { body } : {}),
    clearRouteCache: followsChoice,
  };
  return { result, body };
}

/** Outbound's changes to the backend's answer, as Envoy passes it on. */
export function outboundMutation(
  backend: { readonly status: number; readonly headers: [string, string][] },
  final: FinalResponse,
  traceHeaders: readonly HeaderChange[],
): ContinueResult {
  const { set, remove } = diffHeaders(backend.headers, final.headers);
  return {
    action: 'continue',
    headers: [
      ...(final.status !== backend.status ? [{ name: ':status', value: String(final.status) }] : []),
      ...set,
      ...traceHeaders,
    ],
    removeHeaders: remove,
  };
}
