import type { MatchResult } from '../../catalog/catalog.js';
import { subscriptionMessages } from '../../catalog/subscriptions.js';
import {
  continueUnchanged,
  type Exchange,
  type ExchangeFactory,
  type MessageHead,
  type PhaseDeadline,
  type PhaseRequests,
  type PhaseResult,
} from '../../extproc/exchange.js';
import type { HeaderChange, HeaderFields } from '../../extproc/headers.js';
import type { RequestLogFields } from '../../log.js';
import {
  type FinalResponse,
  type ForwardedRequest,
  type Pipeline,
  PipelineRun,
  type PolicyServices,
  type RequestDescription,
} from '../../policy/index.js';
import { requestServices } from '../exchange-log-fields.js';
import { workDeadline } from '../work-deadline.js';
import {
  type AdmittedRequest,
  admitRequest,
  enterOperation,
  forProduct,
  matchRoute,
  type OperationMatch,
  requestIdentity,
  requestLine,
} from './admission.js';
import type { CallServices } from './backend-calls.js';
import { entityCallServices, observeAnswer, withCredentials } from './backend-entities.js';
import { bodyRequest, declaredLength, forwardTo, notAnApiResult } from './forwarding.js';
import { McpGate } from './mcp-gate.js';
import { backendBody, backendHeaders } from './outbound.js';
import { phasesFor, soapPhases } from './phases.js';
import type { PolicyEngine } from './policy-engine.js';
import { preflightAnswer } from './preflight.js';
import {
  answeredWhole,
  bodyTooLarge,
  largeBodyRefusal,
  malformedRequest,
  type Refusal,
  refusalResult,
} from './refusals.js';
import { type ExchangeState, runOf, type Step } from './state.js';
import { ExchangeRecord } from './summary.js';

/**
 * Runs each request's effective policy: matches the operation on the request headers, runs inbound (after the
 * buffered body when the pipeline reads it), tells Envoy where to forward, and runs outbound on the response when
 * the pipeline has outbound or on-error work. Its states are state.ts's `ExchangeState`.
 */
export function policyExchanges(engine: PolicyEngine): ExchangeFactory {
  return (stream) => new PolicyExchange(engine, stream?.deadline);
}

class PolicyExchange implements Exchange {
  /** The request's ids, on every line its pipelines log (exchange-log-fields.ts). */
  private readonly logFields: RequestLogFields = {};
  /** The policy services as this request's pipelines see them (made with its first pipeline run). */
  private requestServices: PolicyServices | undefined;
  private state: ExchangeState = { kind: 'matching' };
  /** An MCP server API's own checks: the client's token (never forwarded), the tool filter (mcp-gate.ts). */
  private mcp: McpGate | undefined;
  private readonly record = new ExchangeRecord();

  constructor(
    private readonly engine: PolicyEngine,
    /** Envoy's wait for the phase being answered, which slow policy work extends (work-deadline.ts). */
    private readonly phaseDeadline?: PhaseDeadline,
  ) {}

  private get services(): PolicyServices {
    if (this.requestServices) return this.requestServices;
    const secrets = () => runOf(this.state)?.run.secrets;
    const services = requestServices(this.engine.services, this.logFields, secrets);
    const deadline = this.phaseDeadline && workDeadline(this.phaseDeadline, this.engine.maxMessageTimeoutMs);
    this.requestServices = deadline ? { ...services, deadline } : services;
    return this.requestServices;
  }

  async requestHeaders(head: MessageHead): Promise<PhaseResult> {
    if (this.state.kind !== 'matching')
      throw new TypeError(`request headers arrived for an exchange already ${this.state.kind}`);
    const { headers } = head;
    const line = requestLine(headers);
    const { requestId, traceId, requestIdHeader, strippedHeaders } = requestIdentity(head);
    const asked = { requestId, traceId, method: line.method, path: line.rawPath };
    this.record.start(asked, headers, this.engine.debugTrace);
    this.logFields.requestId = requestId;
    this.logFields.traceId = traceId;
    const route = matchRoute(this.engine.catalog, head, line);
    if (route.kind === 'refused') return this.refuse(route.refusal, undefined, requestIdHeader);
    if (route.kind === 'not-an-api') {
      this.record.notAnApi();
      this.state = { kind: 'not-an-api' };
      return notAnApiResult(requestIdHeader, strippedHeaders, route, line.search);
    }
    const { match } = route;
    this.record.matchedApi(match.api.access.keyQuery);
    const tracing = this.record.tracing;
    const ids = { requestId, tracing, strippedHeaders, requestIdHeader };
    const request = admitRequest(this.engine, head, line, route, ids);
    // Envoy forwards only well-formed requests; this is for an ext_proc client that is not Envoy, or a bug in one.
    if (!request) return this.answer(malformedRequest, undefined);
    this.record.admitted(match.api.id);
    if (match.kind === 'no-operation') return this.operationNotFound(request, match, headers);
    const mcp = await McpGate.open(this.engine, match.api.id, line.method, headers);
    if (mcp && !(mcp instanceof McpGate)) return this.answer(mcp, undefined);
    this.mcp = mcp;
    if (request.access.kind === 'refused') {
      const { reason } = request.access;
      const pipeline = forProduct(request.access, match.api.apiPipeline, match.api.productApiPipelines);
      const run = this.deciding(pipeline, request.description);
      return this.answer(await run.onAccessRefused(reason, subscriptionMessages[reason]), run);
    }
    if (match.kind === 'soap-body') {
      // The operation is known only from the SOAP body: ask for it, and for every later phase any of the API's
      // operations could need, since the answer to these headers is the only chance to ask.
      const next = soapPhases(match.api, request.access);
      return this.awaitBody({ kind: 'awaiting-soap-body', request, match }, headers, next);
    }
    const pipeline = this.enterOperation(request, match);
    const phases = phasesFor(pipeline, !head.endOfStream, this.engine.backendEntities?.watching);
    // A traced request's answer carries its trace id, so the response phase is needed.
    const traced = tracing ? { ...phases, responseHeaders: true } : phases;
    const next = this.mcp?.phases(traced, !head.endOfStream) ?? traced;
    // Inbound reads the body: wait for it (buffered) before running anything.
    if (next.requestBody)
      return this.awaitBody({ kind: 'awaiting-request-body', request, pipeline }, headers, next);
    const result = await this.runInbound(request, pipeline, request.description, undefined);
    if (result.action === 'respond') return result;
    // Retries and followed redirects are the engine's calls, made on seeing the backend's answer.
    const run = runOf(this.state);
    const engineCalls = run?.run.retry !== undefined || run?.run.forward?.followRedirects === true;
    return {
      ...result,
      headers: [...requestIdHeader, ...(result.headers ?? [])],
      next: engineCalls ? { ...next, responseHeaders: true } : next,
    };
  }

  async requestBody(body: Buffer, endOfStream: boolean): Promise<PhaseResult> {
    const state = this.state;
    // Only a request waiting for its body asked for it.
    if (state.kind !== 'awaiting-soap-body' && state.kind !== 'awaiting-request-body')
      return continueUnchanged;
    // Envoy hands over at most its buffer limit, marked not end-of-stream when the body goes on (chunked, no
    // content-length): either way the body is over the limit and no policy sees it.
    if (!endOfStream || bodyTooLarge(this.engine, body.length))
      return this.refuse(largeBodyRefusal(this.engine.maxRequestBodyBytes));
    switch (state.kind) {
      case 'awaiting-soap-body': {
        const match = this.engine.catalog.matchSoapBody(state.match, body);
        if (match.kind === 'no-operation') return this.operationNotFound(state.request, match, new Map());
        const pipeline = this.enterOperation(state.request, match);
        return this.runInbound(state.request, pipeline, { ...state.request.description, body }, body);
      }
      case 'awaiting-request-body':
        return this.runInbound(state.request, state.pipeline, { ...state.request.description, body }, body);
    }
  }

  async responseHeaders(head: MessageHead): Promise<PhaseResult> {
    const state = this.state;
    // Only a forwarded request has a backend's answer for policies; any other passes as it is.
    if (state.kind !== 'forwarded') return continueUnchanged;
    await observeAnswer(this.engine, state.sent, head.headers);
    return this.enter(await backendHeaders(state, head, this.callServices, this.record));
  }

  async responseBody(body: Buffer, endOfStream: boolean): Promise<PhaseResult> {
    const state = this.state;
    switch (state.kind) {
      case 'streaming-response':
      case 'awaiting-response-body':
        return this.enter(await backendBody(state, body, endOfStream, this.callServices, this.record));
      default:
        return continueUnchanged;
    }
  }

  end(): void {
    const run = runOf(this.state);
    // Releases what the request held (a concurrency slot) even when the client went away mid-request.
    void run?.end();
    this.record.finish(this.engine, run);
  }

  /** The request is for this operation: its pipeline is the one that runs. */
  private enterOperation(request: AdmittedRequest, match: OperationMatch): Pipeline {
    const pipeline = enterOperation(request, match);
    this.record.operationEntered(match.operation.id, pipeline);
    return pipeline;
  }

  /** A known API without the requested operation: 404 through on-error (a CORS preflight may be answered). */
  private async operationNotFound(
    request: AdmittedRequest,
    match: Extract<MatchResult<Pipeline>, { kind: 'no-operation' }>,
    headers: HeaderFields,
  ): Promise<PhaseResult> {
    const preflight = await preflightAnswer(match, request.description, headers, this.services);
    if (preflight) return this.answer(preflight.response, preflight.run);
    const run = this.deciding(match.api.apiPipeline, request.description);
    return this.answer(await run.onOperationNotFound(), run);
  }

  /** Asks Envoy for the request body, unless its declared length is already over the limit (413 at once). */
  private awaitBody(
    waiting: Extract<ExchangeState, { kind: 'awaiting-soap-body' | 'awaiting-request-body' }>,
    headers: HeaderFields,
    next: PhaseRequests,
  ): PhaseResult {
    const declared = declaredLength(headers);
    if (declared !== undefined && bodyTooLarge(this.engine, declared))
      return this.refuse(largeBodyRefusal(this.engine.maxRequestBodyBytes));
    this.state = waiting;
    return bodyRequest(waiting.request, declared !== undefined, next);
  }

  /** A pipeline run starts on the request; the exchange holds it while its policies decide. */
  private deciding(pipeline: Pipeline, description: RequestDescription): PipelineRun {
    const run = new PipelineRun(pipeline, description, this.services);
    this.state = { kind: 'deciding', run };
    return run;
  }

  private async runInbound(
    request: AdmittedRequest,
    pipeline: Pipeline,
    description: RequestDescription,
    body: Buffer | undefined,
  ): Promise<PhaseResult> {
    const hidden = body && (await this.mcp?.inspect(body));
    if (hidden) return this.answer(hidden, undefined);
    const run = this.deciding(pipeline, description);
    const outcome = await run.onRequest();
    if (outcome.kind === 'respond') return this.answer(outcome.response, run);
    const credentialed = await withCredentials(this.engine, outcome.request, run);
    if ('refusal' in credentialed) return this.refuse(credentialed.refusal, run);
    return this.forward(request, run, pipeline, credentialed.request, body, outcome.request);
  }

  /** `clientBody`: the request body when Envoy sent it (buffered), to replay it on a retry. */
  private forward(
    request: AdmittedRequest,
    run: PipelineRun,
    pipeline: Pipeline,
    forwarded: ForwardedRequest,
    clientBody: Buffer | undefined,
    beforeCredentials: ForwardedRequest,
  ): PhaseResult {
    const mutation = forwardTo(this.engine, request, forwarded, this.record.method, this.mcp?.authorization);
    if (mutation.kind === 'refused') return this.refuse(mutation.refusal, run);
    const { route } = mutation;
    this.state = {
      kind: 'forwarded',
      run,
      pipeline,
      sent: { request: forwarded, route, body: mutation.body ?? clientBody, beforeCredentials },
      reshape: this.mcp?.reshape,
    };
    this.record.forwarded();
    return mutation.result;
  }

  /** The engine's services for its own backend calls, and the request's whose deadline bounds them. */
  private get callServices(): CallServices {
    return entityCallServices(this.engine, { engine: this.engine.services, request: this.services }, () =>
      runOf(this.state),
    );
  }

  private enter(step: Step): PhaseResult {
    this.state = step.state;
    return step.result;
  }

  private answer(response: FinalResponse, run: PipelineRun | undefined): PhaseResult {
    return this.enter(answeredWhole(response, run, this.record));
  }

  /** The engine refuses the request itself; `run`: the pipeline run to end with the exchange, if one started. */
  private refuse(
    refusal: Refusal,
    run?: PipelineRun,
    requestIdHeader: readonly HeaderChange[] = [],
  ): PhaseResult {
    this.state = { kind: 'answered', run };
    this.record.responded(refusal.status, refusal.lastError);
    return refusalResult(refusal, requestIdHeader, this.record.traceHeaders());
  }
}
