/**
 * The response side of a forwarded exchange: the backend's answer held for its body, streamed past the run's
 * watchers, or through outbound (after the engine's own retries and redirects) — or on-error when Envoy could not
 * reach the backend. Each step returns the exchange's next state with the answer to Envoy.
 */
import { responseAttributes } from '../../envoy/contract.js';
import { continueUnchanged, type MessageHead } from '../../extproc/exchange.js';
import { policyVisibleHeaders } from '../../extproc/header-changes.js';
import { firstHeader } from '../../extproc/headers.js';
import type { BackendResponse, FinalResponse, PipelineRun } from '../../policy/index.js';
import { type CallServices, retriedAndRedirected } from './backend-calls.js';
import { outboundMutation } from './forwarding.js';
import { isEventStream } from './phases.js';
import { answeredWhole, localReplyReplacement } from './refusals.js';
import type { ExchangeState, Forwarded, Step } from './state.js';
import type { ExchangeRecord } from './summary.js';

type AwaitingBody = Extract<ExchangeState, { kind: 'awaiting-response-body' }>;
type Streaming = Extract<ExchangeState, { kind: 'streaming-response' }>;

/** The backend's response headers: outbound runs on them now, or they are held for the body. */
export async function backendHeaders(
  state: Forwarded,
  head: MessageHead,
  services: CallServices,
  record: ExchangeRecord,
): Promise<Step> {
  const { run, pipeline } = state;
  // A 101 (a WebSocket handshake the backend accepted): what follows is the upgraded connection's messages, which
  // Envoy carries by itself; outbound runs on the headers alone, never waiting for a body that does not end.
  if (firstHeader(head.headers, ':status') === '101')
    return outbound(state, head, undefined, services, record);
  if ((pipeline.needs.responseBody || state.reshape) && !head.endOfStream) {
    // A body only the reshaping reads was not asked for with the request: it is now.
    const ask = pipeline.needs.responseBody ? {} : { next: { responseHeaders: true, responseBody: true } };
    return {
      state: { ...state, kind: 'awaiting-response-body', head },
      result: { action: 'continue', ...ask },
    };
  }
  if (pipeline.needs.responseStream && run.run.responseWatchers.length > 0) {
    if (head.endOfStream) await run.responseBodyChunk(Buffer.alloc(0), true);
    else if (isEventStream(head.headers)) {
      // An event stream goes on chunk by chunk, watched as it passes; outbound runs on its headers now.
      const step = await outbound(state, head, undefined, services, record);
      if (step.result.action !== 'continue') return step;
      return {
        state: { kind: 'streaming-response', run },
        result: { ...step.result, next: { responseHeaders: true, responseBodyStreamed: true } },
      };
    } else {
      // Any other answer is whole and small (JSON): held, so what its watchers learn (usage) reaches outbound.
      return {
        state: { ...state, kind: 'awaiting-response-body', head },
        result: { action: 'continue', next: { responseHeaders: true, responseBody: true } },
      };
    }
  }
  return outbound(state, head, undefined, services, record);
}

/** The backend's response body: a chunk of a watched stream, or the whole body outbound waited for. */
export async function backendBody(
  state: AwaitingBody | Streaming,
  body: Buffer,
  endOfStream: boolean,
  services: CallServices,
  record: ExchangeRecord,
): Promise<Step> {
  switch (state.kind) {
    case 'streaming-response':
      // Each chunk is answered unchanged; the last only once its watchers have counted it.
      await state.run.responseBodyChunk(body, endOfStream);
      return { state, result: continueUnchanged };
    case 'awaiting-response-body': {
      if (state.pipeline.needs.responseStream) await state.run.responseBodyChunk(body, true);
      const reshaped = state.reshape?.(body, state.head);
      return outbound(state, state.head, reshaped ?? body, services, record, reshaped !== undefined);
    }
  }
}

/** Runs outbound (after the engine's own retries and redirects) or on-error on the backend's answer. */
async function outbound(
  state: Forwarded | AwaitingBody,
  head: MessageHead,
  body: Buffer | undefined,
  services: CallServices,
  record: ExchangeRecord,
  /** `body` is not the one Envoy holds (reshaped): the answer is sent whole. */
  reshaped = false,
): Promise<Step> {
  const { run, sent } = state;
  const status = Number(firstHeader(head.headers, ':status') ?? 200);
  const details = head.attributes.get(responseAttributes.codeDetails);
  const backendHeaders = policyVisibleHeaders(head.headers);
  if (typeof details === 'string' && details !== 'via_upstream' && status >= 500) {
    // Envoy's own reply: the backend was not reached or did not answer in time.
    const timeout = status === 504 || details.includes('timeout');
    const final = await run.onBackendFailure(timeout ? 'Timeout' : 'BackendConnectionFailure', details);
    record.responded(final.status);
    return { state: answered(run), result: localReplyReplacement(final, backendHeaders) };
  }
  const first: BackendResponse = { status, headers: backendHeaders, ...(body ? { body } : {}) };
  let fetched: { readonly response: BackendResponse; readonly replaced: boolean };
  try {
    fetched = await retriedAndRedirected(run, first, sent, services);
  } catch (error) {
    const timeout =
      typeof error === 'object' && error !== null && 'code' in error && error.code === 'TIMEOUT';
    const final = await run.onBackendFailure(
      timeout ? 'Timeout' : 'BackendConnectionFailure',
      timeout ? 'Request to the backend timed out.' : 'The backend could not be reached.',
    );
    return answeredWhole(final, run, record);
  }
  const final = withHeaders(await run.onResponse(fetched.response), services.answerHeaders?.(run));
  record.status(final.status);
  // A response the engine fetched itself is not the one Envoy holds: send it whole.
  if (final.bodyChanged || fetched.replaced || reshaped) return answeredWhole(final, run, record);
  const result = outboundMutation({ status, headers: backendHeaders }, final, record.traceHeaders());
  return { state: answered(run), result };
}

/** The answer with `added` appended (a header of the same name the backend or a policy set stays). */
function withHeaders(
  final: FinalResponse,
  added: readonly (readonly [string, string])[] | undefined,
): FinalResponse {
  return added === undefined || added.length === 0
    ? final
    : { ...final, headers: [...final.headers, ...added] };
}

function answered(run: PipelineRun): ExchangeState {
  return { kind: 'answered', run };
}
