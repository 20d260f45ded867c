/** Which of Envoy's later phases an exchange asks for, decided on the request headers. */
import type { PhaseRequests } from '../../extproc/exchange.js';
import { firstHeader, type HeaderFields } from '../../extproc/headers.js';
import type { Pipeline } from '../../policy/index.js';

/** What to ask Envoy for after the request headers. */
export function phasesFor(pipeline: Pipeline, requestHasBody: boolean): PhaseRequests {
  // on-error runs for failures Envoy reports on the response path (backend unreachable), so it needs the headers.
  const onError = pipeline.elements['on-error'].length > 0;
  // A retry around forward-request calls the backend again with the same body: keep it.
  const retries = pipeline.elements.backend.includes('retry');
  return {
    requestBody: (pipeline.needs.requestBody || retries) && requestHasBody,
    responseHeaders: pipeline.needs.responseHeaders || onError || retries,
    responseBody: pipeline.needs.responseBody,
  };
}

/** What a request may need when its operation is one of several: every phase any of them needs. */
export function mergedPhases(all: readonly PhaseRequests[]): PhaseRequests {
  return {
    requestBody: true,
    responseHeaders: all.some((phases) => phases.responseHeaders),
    responseBody: all.some((phases) => phases.responseBody),
  };
}

/** A server-sent-event stream (`text/event-stream`), which must pass chunk by chunk, never held whole. */
export function isEventStream(headers: HeaderFields): boolean {
  return (firstHeader(headers, 'content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
