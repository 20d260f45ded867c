import type { MatchResult } from '../../catalog/catalog.js';
import type { MessageHead, PhaseResult } from '../../extproc/exchange.js';
import type { Pipeline, PipelineRun } from '../../policy/index.js';
import type { AdmittedRequest } from './admission.js';
import type { SentRequest } from './backend-calls.js';

/** The request went to the backend; its answer, when Envoy hands it over, goes through outbound. */
export interface Forwarded {
  readonly kind: 'forwarded';
  readonly run: PipelineRun;
  readonly pipeline: Pipeline;
  readonly sent: SentRequest;
  /** Rewrites the backend's answer before outbound (an MCP API's `tools/list` without its hidden tools). */
  readonly reshape?: ((body: Buffer, head: MessageHead) => Buffer | undefined) | undefined;
}

/**
 * Where one exchange is in a request's life: the phase methods switch on it, and what each state holds is all a
 * later phase may read. ExtProcStream's table (extproc/stream.ts) orders the phases; PipelineRun's own state
 * orders the sections.
 *
 *   matching ─┬─► not-an-api
 *             ├─► awaiting-soap-body ────┐
 *             ├─► awaiting-request-body ─┤
 *             └──────────────────────────┴─► deciding ─┬─► forwarded ─┬─► awaiting-response-body ─► answered
 *                                                      └─► answered   ├─► streaming-response
 *                                                                     └─► answered
 *
 * A refusal (a path, route or version the engine will not serve, a body over the limit, a backend Envoy would not
 * reach) goes to `answered` from wherever it is found.
 */
export type ExchangeState =
  /** Nothing received yet: the request headers pick the API and operation. */
  | { readonly kind: 'matching' }
  /** The URL is no API's: Envoy routes it on its own routes, and no later phase was asked for. */
  | { readonly kind: 'not-an-api' }
  /** A SOAP API whose operation only the request body names: the body picks it, then inbound runs. */
  | {
      readonly kind: 'awaiting-soap-body';
      readonly request: AdmittedRequest;
      readonly match: Extract<MatchResult<Pipeline>, { kind: 'soap-body' }>;
    }
  /** The operation's pipeline reads the request body (or a retry replays it): inbound runs once Envoy sends it. */
  | { readonly kind: 'awaiting-request-body'; readonly request: AdmittedRequest; readonly pipeline: Pipeline }
  /**
   * Policies run on the request (inbound, or on-error for a refused key or an unknown operation): what they decide
   * leads to `forwarded` or `answered`. The run is held so that a client gone meanwhile still ends it.
   */
  | { readonly kind: 'deciding'; readonly run: PipelineRun }
  | Forwarded
  /** The backend's headers are held until its body comes (buffered), for outbound or the run's body watchers. */
  | (Omit<Forwarded, 'kind'> & { readonly kind: 'awaiting-response-body'; readonly head: MessageHead })
  /** An event stream passes chunk by chunk, each fed to the run's response watchers; outbound has run. */
  | { readonly kind: 'streaming-response'; readonly run: PipelineRun }
  /**
   * The exchange has its answer: the engine's own (a refusal, a policy's response, on-error's in place of Envoy's
   * local reply), or outbound's changes to the backend's. A phase still asked for passes unchanged.
   */
  | { readonly kind: 'answered'; readonly run: PipelineRun | undefined };

/** The pipeline run the exchange holds in this state (to end it, and for its secrets), if any. */
export function runOf(state: ExchangeState): PipelineRun | undefined {
  switch (state.kind) {
    case 'matching':
    case 'not-an-api':
    case 'awaiting-soap-body':
    case 'awaiting-request-body':
      return undefined;
    case 'deciding':
    case 'forwarded':
    case 'awaiting-response-body':
    case 'streaming-response':
    case 'answered':
      return state.run;
  }
}

/** One step of the exchange: the state it goes to, and the answer to Envoy's message. */
export interface Step {
  readonly state: ExchangeState;
  readonly result: PhaseResult;
}
