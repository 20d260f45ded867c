import { randomUUID } from 'node:crypto';
import type { Catalog, CatalogApi, MatchResult, RequestHints } from '../catalog/catalog.js';
import { type NormalizedPath, normalizeRequestPath } from '../catalog/request-path.js';
import {
  type AccessDecision,
  type SubscriptionDirectory,
  subscriptionMessages,
} from '../catalog/subscriptions.js';
import {
  apiRouteNamePrefix,
  backendSelectionHeader,
  internalHeaderPrefix,
  requestAttributes,
  responseAttributes,
  routeAttributes,
  traceRequestHeader,
  upstreamTimeoutHeader,
} from '../envoy/contract.js';
import { UrlModel } from '../expr/index.js';
import type {
  Exchange,
  ExchangeFactory,
  MessageHead,
  PhaseDeadline,
  PhaseRequests,
  PhaseResult,
} from '../extproc/exchange.js';
import {
  clientAddress,
  diffHeaders,
  framingHeaders,
  headerValue,
  isEnvoyHeader,
  policyVisibleHeaders,
  unforwardable,
} from '../extproc/header-changes.js';
import { firstHeader, type HeaderChange, type HeaderFields } from '../extproc/headers.js';
import type { RequestLogFields } from '../log.js';
import {
  allowedMs,
  type BackendResponse,
  type FinalResponse,
  type ForwardedRequest,
  type Logger,
  type Pipeline,
  PipelineRun,
  type PolicyServices,
  type RequestDescription,
  type RequestOutcome,
  retryBudgetMs,
  type TraceEntry,
} from '../policy/index.js';
import { redactFields, redactUrl } from '../redact.js';
import type { BackendRoute, BackendRoutes } from './backend-routes.js';
import { type BackendRouting, routedByEnvoy } from './backend-routing.js';
import { clientCertificate, type TrustStore } from './client-certificate.js';
import { requestServices, requestTraceId } from './exchange-log-fields.js';
import { type TraceRouter, traceKeyMatches } from './trace.js';
import type { TraceStep } from './trace-steps.js';
import { workDeadline } from './work-deadline.js';

export interface PolicyEngine {
  readonly catalog: Catalog<Pipeline>;
  readonly routes: BackendRoutes;
  /** Whether Envoy follows the engine's backend choice (see backend-routing.ts); default `engine`. */
  readonly backendRouting?: BackendRouting;
  readonly services: PolicyServices;
  /** Called once per finished exchange with its summary, e.g. to write the access log. */
  readonly onExchangeEnd?: (summary: ExchangeSummary) => void;
  /**
   * Per-request debug tracing: a request whose `x-portcullis-trace` header carries this key is traced — its trace
   * entries, outcome and LastError go to the log as one `debug-trace` line, and the response names the request id.
   */
  readonly debugTrace?: { readonly key: string; readonly router: TraceRouter; readonly logger: Logger };
  /**
   * The largest request body a pipeline that reads the body is given (the gateway's `limits.maxRequestBodyBytes`,
   * which Envoy buffers against too); a larger one is refused with 413. Absent: no check beyond Envoy's.
   */
  readonly maxRequestBodyBytes?: number;
  /**
   * The longest Envoy waits for one answer when the engine asks (its `max_message_timeout`, contract.ts
   * `maxMessageTimeoutMs`); absent: slow policy work asks for what it needs, uncapped.
   */
  readonly maxMessageTimeoutMs?: number;
  /** Subscriptions and their keys; without it every API is open. */
  readonly subscriptions?: SubscriptionDirectory;
  /** The authorities client certificates are checked against (`tls.clientCertificates.trustedCa`). */
  readonly trust?: TrustStore;
}

/** The request header that switches tracing on for one request (with the configured key) — a secret, stripped. */
export const debugTraceHeader = traceRequestHeader;
/** The response header that tells a traced request's id, to find its `debug-trace` log line. */
export const debugTraceIdHeader = 'x-portcullis-trace-id';

export interface ExchangeSummary {
  readonly requestId: string;
  /** The trace the request belongs to (exchange-log-fields.ts), when it belongs to one. */
  readonly traceId?: string;
  readonly method: string;
  readonly path: string;
  readonly api?: string;
  readonly operation?: string;
  /** What the engine did: forwarded to a backend, answered itself, or let Envoy route a URL that is no API. */
  readonly outcome: 'forwarded' | 'responded' | 'not-an-api' | 'abandoned';
  readonly status?: number;
  readonly lastError?: { source: string; reason: string; message: string };
  /** From the stream's start (the request headers) to its end, backend included. */
  readonly durationMs?: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Runs each request's effective policy: matches the operation on the request headers, runs inbound (after the
 * buffered body when the pipeline reads it), tells Envoy where to forward, and runs outbound on the response when
 * the pipeline has outbound or on-error work. States (one exchange): `matching` → (`awaiting request body`) →
 * `forwarded` → (`awaiting response body`) → `done`.
 */
export function policyExchanges(engine: PolicyEngine): ExchangeFactory {
  return (stream) => new PolicyExchange(engine, stream?.deadline);
}

class PolicyExchange implements Exchange {
  /** The request's ids, on every line its pipelines log (exchange-log-fields.ts). */
  private readonly logFields: RequestLogFields = {};
  /** The policy services as this request's pipelines see them (made with its first pipeline run). */
  private requestServices: PolicyServices | undefined;
  private run: PipelineRun | undefined;
  private pipeline: Pipeline | undefined;
  private description: Mutable<RequestDescription> | undefined;
  private match: Exclude<MatchResult<Pipeline>, { kind: 'no-version' }> | undefined;
  private pendingResponse: MessageHead | undefined;
  /** The subscription decision for this call. */
  private access: AccessDecision | undefined;
  /** Set when an operator switched debug tracing on for this request. */
  private traceCollector: { finish(): TraceEntry[]; steps(): TraceStep[] } | undefined;
  /** The client asked for `/<suffix>` exactly, without a trailing slash. */
  private requestedApiRoot = false;
  /** A SOAP request whose operation the body will tell. */
  private pendingSoap: Extract<MatchResult<Pipeline>, { kind: 'soap-body' }> | undefined;
  private summary: { -readonly [K in keyof ExchangeSummary]: ExchangeSummary[K] } = {
    requestId: '',
    method: '',
    path: '',
    outcome: 'abandoned',
  };
  /** When the stream started, for the exchange's duration. */
  private readonly startedAt = performance.now();
  /** Internal headers a client sent, to remove before anything else sees them. */
  private strippedHeaders: string[] = [];
  /** The request headers as policies first saw them, to compute the mutation. */
  private originalHeaders: [string, string][] = [];
  /** The response body streams through (STREAMED), each chunk fed to the run's response watchers. */
  private watchingStream = false;
  /** The request body when Envoy sent it (buffered), to replay it on a retry. */
  private requestBodyBytes: Buffer | undefined;
  /** What was sent to the backend, for the calls the engine makes itself (retry, follow-redirects). */
  private sent: { request: ForwardedRequest; route: BackendRoute; body: Buffer | undefined } | undefined;

  constructor(
    private readonly engine: PolicyEngine,
    /** Envoy's wait for the phase being answered, which slow policy work extends (work-deadline.ts). */
    private readonly phaseDeadline?: PhaseDeadline,
  ) {}

  private get services(): PolicyServices {
    if (this.requestServices) return this.requestServices;
    const services = requestServices(this.engine.services, this.logFields, () => this.run?.run.secrets);
    this.requestServices = this.phaseDeadline
      ? {
          ...services,
          deadline: workDeadline(this.phaseDeadline, this.engine.maxMessageTimeoutMs),
        }
      : services;
    return this.requestServices;
  }

  async requestHeaders(head: MessageHead): Promise<PhaseResult> {
    const headers = head.headers;
    const method = firstHeader(headers, ':method') ?? 'GET';
    const rawPath = firstHeader(headers, ':path') ?? '/';
    const authority = firstHeader(headers, ':authority') ?? '';
    const scheme = firstHeader(headers, ':scheme') ?? 'http';
    const queryStart = rawPath.indexOf('?');
    const search = queryStart < 0 ? '' : rawPath.slice(queryStart);
    const clientRequestId = firstHeader(headers, 'x-request-id');
    const requestId =
      clientRequestId && uuidPattern.test(clientRequestId) ? clientRequestId.toLowerCase() : randomUUID();
    const traceId = requestTraceId(head);
    this.summary =
      traceId === undefined
        ? { requestId, method, path: rawPath, outcome: 'abandoned' }
        : { requestId, traceId, method, path: rawPath, outcome: 'abandoned' };
    this.logFields.requestId = requestId;
    this.logFields.traceId = traceId;
    const debugTrace = this.engine.debugTrace;
    if (debugTrace && traceKeyMatches(firstHeader(headers, debugTraceHeader), debugTrace.key)) {
      this.traceCollector = debugTrace.router.collect(requestId);
    }

    this.strippedHeaders = [...headers.keys()].filter((name) => name.startsWith(internalHeaderPrefix));
    const requestIdHeader: HeaderChange[] = clientRequestId
      ? []
      : [{ name: 'x-request-id', value: requestId }];

    // Matched and forwarded alike: the operation whose policy runs is the one the backend resolves.
    const rawPathname = queryStart < 0 ? rawPath : rawPath.slice(0, queryStart);
    const normalized = normalizeRequestPath(rawPathname);
    if (!normalized.ok) return this.refusePath(normalized, requestIdHeader);
    const pathname = normalized.path;
    const pathChanged = pathname !== rawPathname;
    const hints: RequestHints = {
      soapAction: firstHeader(headers, 'soapaction'),
      contentType: firstHeader(headers, 'content-type'),
      header: (name) => firstHeader(headers, name),
    };
    const routeName = head.attributes.get(routeAttributes.routeName);
    const namedApi =
      typeof routeName === 'string' && routeName.startsWith(apiRouteNamePrefix)
        ? routeName.slice(apiRouteNamePrefix.length)
        : undefined;
    const found =
      namedApi !== undefined
        ? this.engine.catalog.matchNamed(namedApi, method, pathname, new URLSearchParams(search), hints)
        : this.engine.catalog.match(authority, method, pathname, new URLSearchParams(search), hints);
    // A route named for an API that cannot serve this request is the operator's mistake: refused, never let
    // through without the API's policies.
    if (found.kind === 'unknown-api' || found.kind === 'outside-suffix')
      return this.refuseRoute(routeName as string, found, requestIdHeader);
    // Envoy's route for the suffix leads to one of the versions' backends: the engine answers, no API matched.
    if (found.kind === 'no-version') return this.refuseVersion(found, requestIdHeader);
    const match = found;
    this.match = match;
    if (match.kind === 'no-api') {
      this.summary.outcome = 'not-an-api';
      return {
        action: 'continue',
        headers: pathChanged
          ? [...requestIdHeader, { name: ':path', value: `${pathname}${search}` }]
          : requestIdHeader,
        removeHeaders: this.strippedHeaders,
        // A client's routing header may have picked the route, or the raw path did: pick again without them.
        clearRouteCache: this.strippedHeaders.length > 0 || pathChanged,
        next: { requestBody: false, responseHeaders: false, responseBody: false },
      };
    }

    this.originalHeaders = policyVisibleHeaders(headers);
    const apiRelativePath = `${pathname.slice(match.api.urlSuffix.length + 1) || '/'}${search}`;
    this.requestedApiRoot = pathname === `/${match.api.urlSuffix}`;
    const url = requestUrl(scheme, authority, apiRelativePath);
    // Envoy forwards only well-formed requests; this is for an ext_proc client that is not Envoy, or a bug in one.
    if (!url) return this.respond(malformedRequest);
    const access = this.admit(match.api, url);
    this.access = access;
    const keyHeader = match.api.access.keyHeader.toLowerCase();
    // Built field by field rather than with spreads: this runs for every request.
    const description: Mutable<RequestDescription> = {
      method,
      url,
      // As the client sent it: API Management's OriginalUrl keeps the API's URL suffix (public policies strip
      // `context.Api.Path` from `OriginalUrl.Path` to find the operation's part).
      originalUrl: requestUrl(scheme, authority, `${pathname}${search}`) ?? url,
      // The subscription key is the gateway's: removed before any policy or the backend sees the request.
      headers: this.originalHeaders.filter(([name]) => name !== keyHeader),
      clientIp: clientAddress(head.attributes.get(requestAttributes.sourceAddress)),
      certificate: clientCertificate(head.attributes, this.engine.trust),
      matchedParameters: match.kind === 'operation' ? match.parameters : {},
      api: {
        id: match.api.id,
        name: match.api.name,
        path: `/${match.api.urlSuffix}`,
        serviceUrl: serviceUrlOf(match.api),
      },
      requestId,
      tracing: this.traceCollector !== undefined,
    };
    if (access.kind === 'admitted') {
      if (access.subscription) description.subscription = access.subscription;
      if (access.user) description.user = access.user;
      if (access.product) description.product = access.product;
    }
    this.description = description;
    this.summary.api = match.api.id;

    if (match.kind === 'no-operation') return this.operationNotFound(match, headers);
    if (access.kind === 'refused') {
      const run = new PipelineRun(
        this.forProduct(match.api.apiPipeline, match.api.productApiPipelines),
        description,
        this.services,
      );
      this.run = run;
      return this.respond(await run.onAccessRefused(access.reason, subscriptionMessages[access.reason]));
    }

    if (match.kind === 'soap-body') {
      // The operation is known only from the SOAP body: ask for it, and for every later phase any of the API's
      // operations could need, since the answer to these headers is the only chance to ask.
      this.pendingSoap = match;
      const next = mergedPhases(
        match.api.operations.map((operation) =>
          phasesFor(this.forProduct(operation.pipeline, operation.productPipelines), true),
        ),
      );
      return this.awaitBody(headers, requestIdHeader, next);
    }
    const phases = this.enterOperation(match, !head.endOfStream);
    // A traced request's answer carries its trace id, so the response phase is needed.
    const next = this.traceCollector ? { ...phases, responseHeaders: true } : phases;
    if (next.requestBody) {
      // Inbound reads the body: wait for it (buffered) before running anything.
      return this.awaitBody(headers, requestIdHeader, next);
    }
    const result = await this.runInbound(this.description);
    if (result.action === 'respond') return result;
    // Retries and followed redirects are the engine's calls, made on seeing the backend's answer.
    const forward = this.run?.run.forward;
    const engineCalls = this.run?.run.retry !== undefined || forward?.followRedirects === true;
    return {
      ...result,
      headers: [...requestIdHeader, ...(result.headers ?? [])],
      next: engineCalls ? { ...next, responseHeaders: true } : next,
    };
  }

  /** The request is for this operation: its pipeline runs; returns the phases it needs from Envoy. */
  private enterOperation(match: Extract<MatchResult<Pipeline>, { kind: 'operation' }>, hasBody: boolean) {
    this.match = match;
    this.pipeline = this.forProduct(match.operation.pipeline, match.operation.productPipelines);
    this.summary.operation = match.operation.id;
    // The description is this exchange's own (a PipelineRun reads it only when made): completed in place.
    const description = this.description!;
    description.matchedParameters = match.parameters;
    description.operation = {
      id: match.operation.id,
      method: match.operation.method,
      urlTemplate: match.operation.template.text,
    };
    description.responses = match.operation.responses;
    return phasesFor(this.pipeline, hasBody);
  }

  /**
   * Whether the call is admitted, and as part of which product: by its subscription key (header first, then the
   * query parameter, which is removed from `url`), an open product, or an API that needs no subscription.
   */
  private admit(api: CatalogApi<Pipeline>, url: URL): AccessDecision {
    const keyHeader = api.access.keyHeader.toLowerCase();
    const headerKey = this.originalHeaders.find(([name]) => name === keyHeader)?.[1];
    // Without a query there is no key in it (and no need to parse the query into searchParams).
    const queryKey = url.search === '' ? undefined : (url.searchParams.get(api.access.keyQuery) ?? undefined);
    if (queryKey !== undefined) url.searchParams.delete(api.access.keyQuery);
    const directory = this.engine.subscriptions;
    const key = headerKey ?? queryKey;
    if (!directory) return { kind: 'admitted' };
    return directory.decide(api, key);
  }

  /** The pipeline of the product this call belongs to, or the product-less one. */
  private forProduct(pipeline: Pipeline, byProduct: ReadonlyMap<string, Pipeline>): Pipeline {
    const productId = this.access?.kind === 'admitted' ? this.access.productId : undefined;
    return (productId === undefined ? undefined : byProduct.get(productId)) ?? pipeline;
  }

  /** A known API without the requested operation: 404 through on-error (a CORS preflight may be answered). */
  private async operationNotFound(
    match: Extract<MatchResult<Pipeline>, { kind: 'no-operation' }>,
    headers: HeaderFields,
  ): Promise<PhaseResult> {
    const preflight = await this.preflight(match, this.description!, headers);
    if (preflight) return preflight;
    const run = new PipelineRun(match.api.apiPipeline, this.description!, this.services);
    this.run = run;
    return this.respond(await run.onOperationNotFound());
  }

  async requestBody(body: Buffer, endOfStream: boolean): Promise<PhaseResult> {
    // Envoy hands over at most its buffer limit, marked not end-of-stream when the body goes on (chunked, no
    // content-length): either way the body is over the limit and no policy sees it.
    if (!endOfStream || this.bodyTooLarge(body.length)) return this.refuseLargeBody();
    this.requestBodyBytes = body;
    if (this.pendingSoap) {
      const match = this.engine.catalog.matchSoapBody(this.pendingSoap, body);
      this.pendingSoap = undefined;
      if (match.kind === 'no-operation') return this.operationNotFound(match, new Map());
      this.enterOperation(match, true);
    }
    return this.runInbound({ ...this.description!, body });
  }

  /**
   * A CORS preflight (OPTIONS with Origin and Access-Control-Request-Method) for a path whose operations take other
   * methods: API Management lets the cors policy answer it. The inbound section of the operation the actual
   * request would reach runs on the OPTIONS request; only an answer it gives (cors) is used, anything else is
   * OperationNotFound.
   */
  private async preflight(
    match: Extract<MatchResult<Pipeline>, { kind: 'no-operation' }>,
    description: RequestDescription,
    headers: HeaderFields,
  ): Promise<PhaseResult | undefined> {
    const requested = firstHeader(headers, 'access-control-request-method')?.trim().toUpperCase();
    if (description.method !== 'OPTIONS' || !requested || !firstHeader(headers, 'origin')) return undefined;
    const query = new URL(description.url).searchParams;
    const candidates = match.api.operations
      .map((operation) => ({ operation, parameters: operation.template.match(match.apiPath, query) }))
      .filter((candidate) => candidate.parameters !== undefined);
    const target = candidates.find((c) => c.operation.method === requested) ?? candidates[0];
    if (!target) return undefined;
    const run = new PipelineRun(
      target.operation.pipeline,
      {
        ...description,
        matchedParameters: target.parameters!,
        operation: {
          id: target.operation.id,
          method: target.operation.method,
          urlTemplate: target.operation.template.text,
        },
      },
      this.services,
    );
    const outcome = await run.onRequest();
    if (outcome.kind !== 'respond' || run.context.lastError) return undefined;
    this.run = run;
    return this.respond(outcome.response);
  }

  async responseHeaders(head: MessageHead): Promise<PhaseResult> {
    if (!this.run || !this.pipeline) return { action: 'continue' };
    if (this.pipeline.needs.responseBody && !head.endOfStream) {
      this.pendingResponse = head;
      return { action: 'continue' };
    }
    if (this.pipeline.needs.responseStream && this.run.run.responseWatchers.length > 0) {
      if (head.endOfStream) await this.run.responseBodyChunk(Buffer.alloc(0), true);
      else if (isEventStream(head.headers)) {
        // An event stream goes on chunk by chunk, watched as it passes; outbound runs on its headers now.
        const result = await this.runOutbound(head, undefined);
        if (result.action !== 'continue') return result;
        this.watchingStream = true;
        return { ...result, next: { responseHeaders: true, responseBodyStreamed: true } };
      } else {
        // Any other answer is whole and small (JSON): held, so what its watchers learn (usage) reaches outbound.
        this.pendingResponse = head;
        return { action: 'continue', next: { responseHeaders: true, responseBody: true } };
      }
    }
    return this.runOutbound(head, undefined);
  }

  async responseBody(body: Buffer, endOfStream: boolean): Promise<PhaseResult> {
    if (!this.run) return { action: 'continue' };
    if (this.watchingStream) {
      // Each chunk is answered unchanged; the last only once its watchers have counted it.
      await this.run.responseBodyChunk(body, endOfStream);
      return { action: 'continue' };
    }
    if (!this.pendingResponse) return { action: 'continue' };
    if (this.pipeline?.needs.responseStream) await this.run.responseBodyChunk(body, true);
    return this.runOutbound(this.pendingResponse, body);
  }

  end(): void {
    // Releases what the request held (a concurrency slot) even when the client went away mid-request.
    void this.run?.end();
    const lastError = this.run?.context.lastError;
    // The access log shows what was asked, not the credentials it carried (the API's own key parameter too).
    const keyQuery =
      this.match && this.match.kind !== 'no-api' ? [this.match.api.access.keyQuery] : undefined;
    const summary: ExchangeSummary = {
      ...this.summary,
      path: redactUrl(this.summary.path, keyQuery),
      durationMs: Math.round((performance.now() - this.startedAt) * 1000) / 1000,
      ...(lastError?.reason
        ? { lastError: { source: lastError.source, reason: lastError.reason, message: lastError.message } }
        : {}),
    };
    this.engine.onExchangeEnd?.(summary);
    if (this.traceCollector) {
      const steps = this.traceCollector.steps();
      const entries = this.traceCollector.finish();
      const secrets = this.run?.run.secrets;
      const fields = {
        ...summary,
        pipeline: this.pipeline?.elements,
        steps,
        entries: entries.map((entry) => ({
          source: entry.source,
          severity: entry.severity,
          message: entry.message,
        })),
      };
      // Steps and entries were shown without the request's secret values; the rest (a path) is passed through them too.
      this.engine.debugTrace?.logger.info(
        'debug-trace',
        secrets === undefined ? fields : redactFields(fields, 5, (text) => secrets.redact(text)),
      );
    }
  }

  /** Asks Envoy for the request body, unless its declared length is already over the limit (413 at once). */
  private awaitBody(
    headers: HeaderFields,
    requestIdHeader: HeaderChange[],
    next: PhaseRequests,
  ): PhaseResult {
    const declared = firstHeader(headers, 'content-length');
    if (declared !== undefined && this.bodyTooLarge(Number(declared))) return this.refuseLargeBody();
    return {
      action: 'continue',
      headers: requestIdHeader,
      removeHeaders: this.strippedHeaders,
      next: declared === undefined ? { ...next, requestBodyLengthUnknown: true } : next,
    };
  }

  private bodyTooLarge(bytes: number): boolean {
    const limit = this.engine.maxRequestBodyBytes;
    return limit !== undefined && bytes > limit;
  }

  /** 413 with API Management's error shape; no policy runs on a body it was not given whole. */
  private refuseLargeBody(): PhaseResult {
    const limit = this.engine.maxRequestBodyBytes;
    return this.refusal(
      413,
      `The request body is larger than this operation accepts${limit === undefined ? '' : ` (${limit} bytes)`}.`,
      { details: 'portcullis_request_body_too_large' },
    );
  }

  /**
   * An answer the engine gives itself, before or instead of any policy: API Management's JSON error shape with a
   * message safe to show; why goes to the access log (`lastError`) and to Envoy's response details.
   */
  private refusal(
    status: number,
    message: string,
    cause: { readonly lastError?: ExchangeSummary['lastError']; readonly details: string },
    requestIdHeader: HeaderChange[] = [],
  ): PhaseResult {
    this.summary.outcome = 'responded';
    this.summary.status = status;
    if (cause.lastError) this.summary.lastError = cause.lastError;
    return {
      action: 'respond',
      status,
      headers: [
        ...requestIdHeader,
        { name: 'content-type', value: 'application/json' },
        ...this.traceHeaders(),
      ],
      body: Buffer.from(JSON.stringify({ statusCode: status, message })),
      details: cause.details,
    };
  }

  /** The trace id header on a traced request's answer. */
  private traceHeaders(): HeaderChange[] {
    return this.traceCollector ? [{ name: debugTraceIdHeader, value: this.summary.requestId }] : [];
  }

  private async runInbound(description: RequestDescription): Promise<PhaseResult> {
    const run = new PipelineRun(this.pipeline!, description, this.services);
    this.run = run;
    const outcome: RequestOutcome = await run.onRequest();
    if (outcome.kind === 'respond') return this.respond(outcome.response);
    return this.forward(outcome.request);
  }

  private forward(request: ForwardedRequest): PhaseResult {
    const match = this.match as Extract<MatchResult<Pipeline>, { kind: 'operation' }>;
    const route =
      request.backend.backendId !== undefined
        ? this.engine.routes.forBackendId(request.backend.backendId)
        : this.engine.routes.forUrl(request.backend.baseUrl ?? match.api.serviceUrl);
    if (this.engine.backendRouting === 'envoy-route' && !routedByEnvoy(route.origin, match.api.serviceUrl))
      return this.refuseUnroutedBackend(route, match.api.serviceUrl);
    let pathAndQuery = request.pathAndQuery.startsWith('/')
      ? request.pathAndQuery
      : `/${request.pathAndQuery}`;
    // `GET /<suffix>` with nothing after it reaches the service URL itself, not the service URL plus "/": a SOAP
    // endpoint such as …/calculator.asmx often refuses the trailing slash.
    if (
      this.requestedApiRoot &&
      route.basePath !== '' &&
      (pathAndQuery === '/' || pathAndQuery.startsWith('/?'))
    ) {
      pathAndQuery = pathAndQuery.slice(1);
    }
    // Policies may not steer Envoy itself (retries, timeouts, routing): its own headers are the engine's alone.
    const { set, remove } = diffHeaders(
      this.originalHeaders.filter(([name]) => !isEnvoyHeader(name)),
      request.headers.filter(([name]) => !isEnvoyHeader(name)),
    );
    // Under `envoy-route` Envoy keeps the route it matched on the client's path (the API's): re-matching on the
    // path the engine rewrote would miss it, and no route reads the routing header.
    const followsChoice = this.engine.backendRouting !== 'envoy-route';
    const changes: HeaderChange[] = [
      { name: ':path', value: `${route.basePath}${pathAndQuery}` },
      ...(followsChoice ? [{ name: backendSelectionHeader, value: route.cluster }] : []),
      // forward-request's timeout (API Management's default 300 s) bounds the whole backend call.
      { name: upstreamTimeoutHeader, value: String(request.forward.timeoutMs) },
      ...(request.method !== this.summary.method ? [{ name: ':method', value: request.method }] : []),
      ...(route.authority ? [{ name: ':authority', value: route.authority }] : []),
      ...set,
    ];
    const body = request.bodyChanged ? (request.body ?? Buffer.alloc(0)) : undefined;
    if (body) changes.push({ name: 'content-length', value: String(body.length) });
    this.sent = { request, route, body: body ?? this.requestBodyBytes };
    this.summary.outcome = 'forwarded';
    return {
      action: 'continue',
      headers: changes,
      removeHeaders: [
        ...(followsChoice
          ? this.strippedHeaders.filter((name) => name !== backendSelectionHeader)
          : this.strippedHeaders),
        ...remove,
      ],
      ...(body ? { body } : {}),
      clearRouteCache: followsChoice,
    };
  }

  private async runOutbound(head: MessageHead, body: Buffer | undefined): Promise<PhaseResult> {
    const run = this.run!;
    const status = Number(firstHeader(head.headers, ':status') ?? 200);
    const details = head.attributes.get(responseAttributes.codeDetails);
    const backendHeaders = policyVisibleHeaders(head.headers);
    let final: FinalResponse;
    if (typeof details === 'string' && details !== 'via_upstream' && status >= 500) {
      // Envoy's own reply: the backend was not reached or did not answer in time.
      const timeout = status === 504 || details.includes('timeout');
      final = await run.onBackendFailure(timeout ? 'Timeout' : 'BackendConnectionFailure', details);
      return this.replaceLocalReply(final, backendHeaders);
    }
    let response: BackendResponse = { status, headers: backendHeaders, ...(body ? { body } : {}) };
    let replaced = false;
    try {
      for (let attempt = 1; ; attempt++) {
        const delay = run.retryDelay(response, attempt);
        if (delay === undefined) break;
        if (attempt === 1) this.reserveRetries(run);
        if (delay > 0) await this.engine.services.clock.sleep(allowedMs(this.services, delay));
        response = await this.callBackend();
        replaced = true;
      }
      const redirected = await this.followRedirects(response);
      if (redirected) {
        response = redirected;
        replaced = true;
      }
    } catch (error) {
      const timeout = (error as { code?: string }).code === 'TIMEOUT';
      final = await run.onBackendFailure(
        timeout ? 'Timeout' : 'BackendConnectionFailure',
        timeout ? 'Request to the backend timed out.' : 'The backend could not be reached.',
      );
      return this.respond(final);
    }
    final = await run.onResponse(response);
    this.summary.status = final.status;
    // A response the engine fetched itself is not the one Envoy holds: send it whole.
    if (final.bodyChanged || replaced) return this.respond(final);
    const { set, remove } = diffHeaders(backendHeaders, final.headers);
    return {
      action: 'continue',
      headers: [
        ...(final.status !== status ? [{ name: ':status', value: String(final.status) }] : []),
        ...set,
        ...this.traceHeaders(),
      ],
      removeHeaders: remove,
    };
  }

  /**
   * Before the engine's first retry of the backend call: Envoy is asked once to wait for all of them (the calls at
   * forward-request's timeout, the pauses), since it extends its wait for a phase only once.
   */
  private reserveRetries(run: PipelineRun): void {
    const retry = run.run.retry;
    const timeoutMs = this.sent?.request.forward.timeoutMs;
    if (retry === undefined || timeoutMs === undefined) return;
    const pauses = {
      interval: retry.intervalSeconds,
      maxInterval: retry.maxIntervalSeconds,
      delta: retry.deltaSeconds,
      firstFast: retry.firstFastRetry,
    };
    // Envoy made the first call.
    allowedMs(this.services, retryBudgetMs(retry.count, timeoutMs, pauses) - timeoutMs);
  }

  /** Calls the backend again as forwarded (retry), from the engine: Envoy has already delivered its answer. */
  private async callBackend(url?: string, method?: string): Promise<BackendResponse> {
    const { request, route, body } = this.sent!;
    const path = request.pathAndQuery.startsWith('/') ? request.pathAndQuery : `/${request.pathAndQuery}`;
    const answer = await this.engine.services.fetch({
      method: method ?? request.method,
      url: url ?? `${route.origin}${route.basePath}${path}`,
      headers: request.headers.filter(
        ([name]) => !unforwardable.has(name.toLowerCase()) && !isEnvoyHeader(name),
      ),
      ...(body && body.length > 0 && (method ?? request.method) !== 'GET' ? { body } : {}),
      timeoutMs: allowedMs(this.services, request.forward.timeoutMs),
    });
    return { status: answer.status, reason: answer.reason, headers: answer.headers, body: answer.body };
  }

  /** forward-request follow-redirects="true": the engine follows the backend's redirects (at most 10). */
  private async followRedirects(response: BackendResponse): Promise<BackendResponse | undefined> {
    if (!this.sent?.request.forward.followRedirects) return undefined;
    const { request, route } = this.sent;
    const path = request.pathAndQuery.startsWith('/') ? request.pathAndQuery : `/${request.pathAndQuery}`;
    let current = response;
    let url = `${route.origin}${route.basePath}${path}`;
    let method = request.method;
    let followed = false;
    for (let hop = 0; hop < 10 && redirectStatuses.has(current.status); hop++) {
      const location = headerValue(current.headers, 'location');
      if (location === undefined) break;
      url = new URL(location, url).toString();
      if (current.status === 303 || ((current.status === 301 || current.status === 302) && method === 'POST'))
        method = 'GET';
      current = await this.callBackend(url, method);
      followed = true;
    }
    return followed ? current : undefined;
  }

  /**
   * Turns Envoy's local reply (backend unreachable, timed out) into on-error's answer by mutating it, not by a new
   * immediate response: Envoy would pass that through its local-reply mappers again, which rewrite replies to
   * backend failures (see the bootstrap) and would undo on-error's status and body.
   */
  private replaceLocalReply(response: FinalResponse, current: [string, string][]): PhaseResult {
    this.summary.outcome = 'responded';
    this.summary.status = response.status;
    const { set, remove } = diffHeaders(current, response.headers);
    return {
      action: 'continue',
      headers: [{ name: ':status', value: String(response.status) }, ...set],
      removeHeaders: remove,
      body: response.body,
    };
  }

  /**
   * A request on a route named `portcullis:<api id>` (contract.ts) that names no API of the configuration (500: the
   * gateway is misconfigured), or whose path is not under that API's URL suffix (404, as for a URL of no
   * operation). The access log says which route and why; the client is told nothing of the configuration.
   */
  private refuseRoute(
    routeName: string,
    found: { readonly kind: 'unknown-api' } | { readonly kind: 'outside-suffix'; readonly urlSuffix: string },
    requestIdHeader: HeaderChange[],
  ): PhaseResult {
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
    return this.refusal(
      status,
      message,
      { lastError, details: `portcullis_${lastError.reason}` },
      requestIdHeader,
    );
  }

  /**
   * A request under the URL suffix of a header- or query-versioned set that names a version the set does not have
   * (or none, and the set has no version ""): API Management's 404 for a URL of no API. The access log says which
   * version was asked for.
   */
  private refuseVersion(
    found: Extract<MatchResult<Pipeline>, { kind: 'no-version' }>,
    requestIdHeader: HeaderChange[],
  ): PhaseResult {
    const where = `${found.by === 'header' ? 'header' : 'query parameter'} ${found.key}`;
    const lastError = {
      source: 'api-version',
      reason: found.requested === undefined ? 'ApiVersionMissing' : 'ApiVersionNotFound',
      message:
        found.requested === undefined
          ? `no ${where} naming the version of /${found.urlSuffix}, and no version "" (Original) to default to`
          : `no version ${JSON.stringify(found.requested)} (${where}) of /${found.urlSuffix}`,
    };
    return this.refusal(
      404,
      'Resource not found',
      { lastError, details: `portcullis_${lastError.reason}` },
      requestIdHeader,
    );
  }

  /**
   * A backend a policy computed (`set-backend-service` with an expression) that the Envoy in front, routing by its
   * own routes, would not reach: forwarding would send the request to the API's backend instead, past the policy's
   * choice. 500, as for any misconfiguration; the access log says which backend.
   */
  private refuseUnroutedBackend(route: BackendRoute, apiServiceUrl: string): PhaseResult {
    return this.refusal(500, 'Internal server error', {
      lastError: {
        source: 'set-backend-service',
        reason: 'BackendNotRoutable',
        message: `the policies chose ${route.origin}, but the Envoy in front routes by its own routes (--backend-routing envoy-route) to ${new URL(apiServiceUrl).origin}`,
      },
      details: 'portcullis_BackendNotRoutable',
    });
  }

  /** A path the engine will not resolve (see catalog/request-path.ts): 400 before any API or policy sees it. */
  private refusePath(
    refusal: Extract<NormalizedPath, { ok: false }>,
    requestIdHeader: HeaderChange[],
  ): PhaseResult {
    return this.refusal(
      400,
      `Bad request: ${refusal.message}.`,
      {
        lastError: { source: 'request-path', reason: refusal.reason, message: refusal.message },
        details: `portcullis_${refusal.reason}`,
      },
      requestIdHeader,
    );
  }

  private respond(response: FinalResponse): PhaseResult {
    this.summary.outcome = 'responded';
    this.summary.status = response.status;
    return {
      action: 'respond',
      status: response.status,
      headers: [
        ...response.headers
          .filter(([name]) => !framingHeaders.has(name.toLowerCase()))
          .map(([name, value]) => ({ name: name.toLowerCase(), value, append: true })),
        ...this.traceHeaders(),
      ],
      body: response.body,
      details: `portcullis_${this.run?.context.lastError?.reason || 'policy_response'}`,
    };
  }
}

/** Each API's `serviceUrl`, parsed once (the catalog checked it is an absolute http(s) URL). */
const parsedServiceUrls = new WeakMap<CatalogApi<Pipeline>, URL>();

/**
 * `context.Api.ServiceUrl`: an IUrl of the API's configured service URL (not the backend a policy may have chosen).
 * A new one per request, as `context.Request.Url` is: a UrlModel is mutable, a request's own.
 */
function serviceUrlOf(api: CatalogApi<Pipeline>): UrlModel {
  let url = parsedServiceUrls.get(api);
  if (url === undefined) {
    url = new URL(api.serviceUrl);
    parsedServiceUrls.set(api, url);
  }
  return UrlModel.parse(url);
}

/** The URL policies see, or undefined when the scheme or authority cannot make one. */
function requestUrl(scheme: string, authority: string, apiRelativePath: string): URL | undefined {
  try {
    return new URL(
      `${scheme}://${authority || 'localhost'}${apiRelativePath.startsWith('/') ? '' : '/'}${apiRelativePath}`,
    );
  } catch {
    return undefined;
  }
}

const malformedRequest: FinalResponse = {
  status: 400,
  reason: 'Bad Request',
  headers: [['content-type', 'application/json']],
  body: Buffer.from(JSON.stringify({ statusCode: 400, message: 'The request URL is malformed.' })),
  bodyChanged: true,
};

/** What to ask Envoy for after the request headers. */
function phasesFor(pipeline: Pipeline, requestHasBody: boolean): PhaseRequests {
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
function mergedPhases(all: readonly PhaseRequests[]): PhaseRequests {
  return {
    requestBody: true,
    responseHeaders: all.some((phases) => phases.responseHeaders),
    responseBody: all.some((phases) => phases.responseBody),
  };
}

const redirectStatuses = new Set([301, 302, 303, 307, 308]);

/** A server-sent-event stream (`text/event-stream`), which must pass chunk by chunk, never held whole. */
function isEventStream(headers: HeaderFields): boolean {
  return (firstHeader(headers, 'content-type') ?? '').toLowerCase().startsWith('text/event-stream');
}
