/** Which of Envoy's later phases an exchange asks for, decided on the request headers. */
import type { CatalogApi } from '../../catalog/catalog.js';
import type { AccessDecision } from '../../catalog/subscriptions.js';
import type { PhaseRequests } from '../../extproc/exchange.js';
import { firstHeader, type HeaderFields } from '../../extproc/headers.js';
import type { Pipeline } from '../../policy/index.js';
import { forProduct } from './admission.js';

/** What to ask Envoy for after the request headers. */
export function phasesFor(pipeline: Pipeline, requestHasBody: boolean, breakersWatch = false): PhaseRequests {
  // on-error runs for failures Envoy reports on the response path (backend unreachable, timed out), so it needs
  // the headers of those answers only.
  const onError = pipeline.elements['on-error'].length > 0;
  // A retry around forward-request calls the backend again with the same body: keep it.
  const retries = pipeline.elements.backend.includes('retry');
  // A backend with a circuit breaker is told of each of its answers, and a pool with session affinity may set its
  // cookie on them: one set-backend-service may name one.
  const breakers = breakersWatch && choosesNamedBackend(pipeline);
  return {
    requestBody: (pipeline.needs.requestBody || retries) && requestHasBody,
    responseHeaders: pipeline.needs.responseHeaders || retries || breakers,
    responseHeadersOnFailure: onError,
    responseBody: pipeline.needs.responseBody,
  };
}

function choosesNamedBackend(pipeline: Pipeline): boolean {
  // Nested ones too (a <choose> picking the backend), and a backend-id only: a base-url names no entity.
  return [...pipeline.uses.inbound, ...pipeline.uses.backend].some(
    (use) => use.element === 'set-backend-service' && use.attributes['backend-id'] !== undefined,
  );
}

/**
 * What a SOAP request whose operation only its body names may need: the body, and every later phase any of the
 * API's operations could need (for the product it is admitted to), since the answer to its headers is the only
 * chance to ask.
 */
export function soapPhases(api: CatalogApi<Pipeline>, access: AccessDecision): PhaseRequests {
  return mergedPhases(
    api.operations.map((operation) =>
      phasesFor(forProduct(access, operation.pipeline, operation.productPipelines), true),
    ),
  );
}

/** What a request may need when its operation is one of several: every phase any of them needs. */
function mergedPhases(all: readonly PhaseRequests[]): PhaseRequests {
  return {
    requestBody: true,
    responseHeaders: all.some((phases) => phases.responseHeaders),
    responseHeadersOnFailure: all.some((phases) => phases.responseHeadersOnFailure),
    responseBody: all.some((phases) => phases.responseBody),
  };
}

/** A server-sent-event stream (`text/event-stream`), which must pass chunk by chunk, never held whole. */
export function isEventStream(headers: HeaderFields): boolean {
  return (firstHeader(headers, 'content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
