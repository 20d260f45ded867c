/**
 * Runs a compiled pipeline for one request, without knowing the transport. The transport (the ext_proc engine)
 * describes the request, calls `onRequest` (inbound then backend), forwards or answers as told, then gives the
 * backend's answer to `onResponse` (outbound). Any failure stops its section and runs on-error with
 * context.LastError set; without on-error handling the client gets API Management's default status and a safe
 * body, and the internals go to the logger only.
 *
 * States: created → request (inbound, backend) → [forwarded → response (outbound)] → done; `error` (on-error)
 * can follow any of them once.
 */
import {
  ApiInfo,
  ExpressionError,
  encodeUrlPath,
  GroupInfo,
  HeaderCollection,
  LastErrorInfo,
  OperationInfo,
  PolicyContext,
  ProductInfo,
  RequestModel,
  ResponseModel,
  SubscriptionInfo,
  UrlModel,
  UserInfo,
} from '../expr/index.js';
import { reasonPhrase } from './message.js';
import type { Pipeline } from './pipeline.js';
import { RequestSecrets } from './request-secrets.js';
import {
  type BackendSelection,
  type Flow,
  type ForwardSettings,
  PolicyError,
  type RetrySettings,
  RunContext,
  StatementFailure,
} from './runtime.js';
import type { Section } from './schema.js';
import type { PolicyServices } from './services.js';
import { serializeHeaders } from './shared/headers.js';
import type { DeclaredResponse } from './shared/mock-content.js';
import type { OperationDefinition } from './shared/operation-definition.js';
import { waitMs } from './shared/retry-schedule.js';

export type HeaderInit = Iterable<readonly [string, string | readonly string[]]>;

/** A plain description of the request as the transport received it. */
export interface RequestDescription {
  readonly method: string;
  /**
   * Absolute URL whose path is relative to the API (the API's URL suffix removed), e.g.
   * `https://gw.example.com/api/Course?courseID=7`. The backend URL is the backend base URL + this path + query.
   * A URL object is read, never changed (the transport that parsed it already passes it as it is).
   */
  readonly url: string | URL;
  /**
   * The URL as the client sent it, the API's URL suffix included (`https://gw.example.com/courses/api/Course`):
   * context.Request.OriginalUrl, from which policies build gateway links and strip `context.Api.Path` as on API
   * Management. Absent: the same as `url`.
   */
  readonly originalUrl?: string | URL;
  readonly headers: HeaderInit;
  readonly clientIp: string;
  /** The client's TLS certificate as Envoy verified the connection (never from a client-sent header); null: none. */
  readonly certificate?: unknown;
  /** Present only when the pipeline needs the request body (pipeline.needs.requestBody). */
  readonly body?: Buffer | null;
  readonly matchedParameters?: Readonly<Record<string, string>>;
  readonly api?: Partial<ApiInfo>;
  readonly operation?: Partial<OperationInfo>;
  /** The responses the operation's definition declares (mock-response answers from them). */
  readonly responses?: readonly DeclaredResponse[];
  /** What the operation's definition declares (the validation policies check against it). */
  readonly definition?: OperationDefinition;
  readonly product?: Partial<ProductInfo> | null;
  readonly subscription?: Partial<SubscriptionInfo> | null;
  readonly user?: Partial<UserInfo> | null;
  readonly requestId?: string;
  readonly tracing?: boolean;
}

/** The response the client gets (immediate, or the backend's after outbound). */
export interface FinalResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Buffer;
  /** True when a policy replaced the body (the transport must send `body` instead of the backend's). */
  readonly bodyChanged: boolean;
}

/** What to send to the backend after inbound and backend ran. */
export interface ForwardedRequest {
  readonly method: string;
  /** Path relative to the backend base URL, with the query string. */
  readonly pathAndQuery: string;
  readonly headers: readonly (readonly [string, string])[];
  /** The request body when a policy changed it (or consumed it: then empty). */
  readonly body: Buffer | undefined;
  readonly bodyChanged: boolean;
  readonly backend: BackendSelection;
  readonly forward: ForwardSettings;
  readonly retry: RetrySettings | undefined;
}

export type RequestOutcome =
  | { readonly kind: 'forward'; readonly request: ForwardedRequest }
  | { readonly kind: 'respond'; readonly response: FinalResponse };

export interface BackendResponse {
  readonly status: number;
  readonly reason?: string;
  readonly headers: HeaderInit;
  /** Present only when the pipeline needs the response body. */
  readonly body?: Buffer | null;
}

/*
 * The context's callbacks, made by functions rather than written inline: the TypeScript loader keeps the names of
 * the closures it can name (a property definition each), and a PipelineRun is made for every request.
 */

/** context.Trace(message) → the trace sink, under the request's id. */
function traceWriter(services: PolicyServices, context: () => PolicyContext): (message: string) => void {
  return (message) =>
    services.trace.write({
      requestId: context().requestId.value,
      source: 'context.Trace',
      severity: 'verbose',
      message,
      metadata: [],
    });
}

/** created → request → forwarded → response → done (see the file comment). */
type RunState = 'created' | 'request' | 'forwarded' | 'response' | 'done';

export class PipelineRun {
  readonly run: RunContext;
  #state: RunState = 'created';
  #lastErrorStatus = 500;

  constructor(
    private readonly pipeline: Pipeline,
    request: RequestDescription,
    private readonly services: PolicyServices,
  ) {
    const model = new RequestModel({
      method: request.method.toUpperCase(),
      url: UrlModel.parse(request.url),
      ...(request.originalUrl === undefined ? {} : { originalUrl: UrlModel.parse(request.originalUrl) }),
      headers: new HeaderCollection(request.headers),
      body: request.body ?? null,
      ipAddress: request.clientIp,
      // RequestModel copies the parameters into its own Map.
      matchedParameters: request.matchedParameters ?? {},
      certificate: request.certificate ?? null,
    });
    const context: PolicyContext = new PolicyContext({
      request: model,
      api: new ApiInfo(request.api),
      operation: new OperationInfo(request.operation),
      product: request.product ? new ProductInfo(request.product) : null,
      subscription: request.subscription ? new SubscriptionInfo(request.subscription) : null,
      user: request.user
        ? new UserInfo({
            ...request.user,
            // Expressions reach groups only as GroupInfo; the transport describes them as plain data.
            groups: (request.user.groups ?? []).map((group: { id: string; name: string }) =>
              group instanceof GroupInfo ? group : new GroupInfo(group.id, group.name),
            ),
          })
        : null,
      // Undefined: PolicyContext makes one.
      requestId: request.requestId,
      timestamp: new Date(services.clock.now()),
      tracing: request.tracing ?? false,
      onTrace: traceWriter(services, () => context),
      // One closure per run: the engine's services object is its request's own, nothing to share it with.
      now: () => services.clock.now(),
    });
    const secrets = new RequestSecrets(pipeline.secrets ?? [], request, context.variables);
    this.run = new RunContext(context, services, secrets);
    // context.Request.Url is the URL the request goes to (RequestModel.backendUrl): set-backend-service's choice,
    // else the API's service URL.
    const run = this.run;
    model.backendBase = () => run.backend.baseUrl ?? context.api.serviceUrl?.toString();
    if (request.responses !== undefined) this.run.declaredResponses = request.responses;
    this.run.operationDefinition = request.definition;
    const observer = services.observer;
    if (observer !== undefined) {
      observer.runStarted(this.run);
      if (observer.watch !== undefined && observer.observes(this.run))
        this.run.watch = observer.watch(this.run);
    }
  }

  get context(): PolicyContext {
    return this.run.context;
  }

  /**
   * Ends the request without a final response (the client went away, the stream failed): runs the end tasks
   * (limit-concurrency slots are given back). Idempotent; the runner calls it itself after a final response.
   */
  end(): Promise<void> {
    this.#state = 'done';
    return this.run.end();
  }

  /**
   * A piece of the backend's response body passing to the client (see ResponseBodyWatcher); the transport calls it
   * only when the pipeline watches the body, in order, `last` on the final piece. A watcher that fails is logged.
   */
  async responseBodyChunk(bytes: Buffer, last: boolean): Promise<void> {
    for (const watcher of this.run.responseWatchers) {
      try {
        await watcher.chunk(bytes, last);
      } catch (err) {
        this.services.logger.warn('response body watcher failed', {
          requestId: this.run.context.requestId.value,
          error: this.#redact(err instanceof Error ? err.message : String(err)),
        });
      }
    }
  }

  /** Runs inbound and backend. */
  async onRequest(): Promise<RequestOutcome> {
    this.#advance('created', 'request');
    for (const section of ['inbound', 'backend'] as const) {
      const flow = await this.#section(section);
      if (flow === 'error') return { kind: 'respond', response: await this.#onError() };
      if (flow === 'respond') return { kind: 'respond', response: this.#final(true) };
    }
    if (this.run.forward === undefined) {
      // No forward-request: API Management skips the backend and runs outbound on an empty 200.
      this.#state = 'forwarded';
      return { kind: 'respond', response: await this.onResponse({ status: 200, headers: [] }) };
    }
    this.#state = 'forwarded';
    const request = this.run.context.request;
    const consumed = request.body?.consumed === true;
    const bodyChanged = this.run.requestBodyChanged || consumed;
    return {
      kind: 'forward',
      request: {
        method: request.method,
        pathAndQuery: encodeUrlPath(request.url.path) + request.url.queryString,
        headers: serializeHeaders(request.headers),
        body: bodyChanged
          ? consumed
            ? Buffer.alloc(0)
            : (request.body?.bytes ?? Buffer.alloc(0))
          : undefined,
        bodyChanged,
        backend: this.run.backend,
        forward: this.run.forward,
        retry: this.run.retry,
      },
    };
  }

  /**
   * `retry` around forward-request, which the transport carries out: after the backend's answer (`attempt` 1 for
   * the first retry), the milliseconds to wait before calling the backend again, or undefined to keep this answer.
   * A condition that fails keeps the answer (the failure is logged).
   */
  retryDelay(response: BackendResponse, attempt: number): number | undefined {
    const retry = this.run.retry;
    if (retry === undefined || this.#state !== 'forwarded' || attempt > retry.count) return undefined;
    this.run.context.response = new ResponseModel({
      statusCode: response.status,
      statusReason: response.reason ?? reasonPhrase(response.status),
      headers: new HeaderCollection(response.headers),
      body: response.body ?? null,
    });
    try {
      if (!retry.condition(this.run)) return undefined;
    } catch (err) {
      this.services.logger.warn('retry condition failed', {
        requestId: this.run.context.requestId.value,
        error: this.#redact(err instanceof Error ? err.message : String(err)),
      });
      return undefined;
    }
    if (attempt === 1 && retry.firstFastRetry) return 0;
    return waitMs(attempt, retry.intervalSeconds, retry.maxIntervalSeconds, retry.deltaSeconds);
  }

  /** Runs outbound on the backend's answer. */
  async onResponse(response: BackendResponse): Promise<FinalResponse> {
    this.#advance('forwarded', 'response');
    this.run.context.response = new ResponseModel({
      statusCode: response.status,
      statusReason: response.reason ?? reasonPhrase(response.status),
      headers: new HeaderCollection(response.headers),
      body: response.body ?? null,
    });
    if (
      this.run.forward?.failOnErrorStatusCode === true &&
      response.status >= 400 &&
      response.status <= 599
    ) {
      this.#setLastError({
        source: 'forward-request',
        reason: 'BackendError',
        message: `Backend responded with status code ${response.status}`,
        section: 'backend',
      });
      this.#lastErrorStatus = response.status;
      return this.#onError();
    }
    for (const edit of this.run.responseEdits.splice(0)) edit(this.run);
    const flow = await this.#section('outbound');
    if (flow === 'error') return this.#onError();
    // return-response in outbound replaces the whole response.
    return this.#final(flow === 'respond' || this.run.responseBodyChanged);
  }

  /**
   * The request matched the API but none of its operations: API Management answers 404 "Resource not found"
   * through on-error with reason OperationNotFound. Run this on the API's pipeline (no operation scope).
   */
  async onOperationNotFound(): Promise<FinalResponse> {
    return this.#refuseBeforeInbound(
      new PolicyError(
        'OperationNotFound',
        'Unable to match incoming request to an operation.',
        404,
        'Resource not found',
      ),
      'configuration',
    );
  }

  /**
   * The gateway itself refused the call before any policy ran — a missing or invalid subscription key (401):
   * on-error runs with LastError from source `authorization`.
   */
  async onAccessRefused(reason: string, message: string): Promise<FinalResponse> {
    return this.#refuseBeforeInbound(new PolicyError(reason, message, 401), 'authorization');
  }

  #refuseBeforeInbound(refusal: PolicyError, source: string): Promise<FinalResponse> {
    this.#advance('created', 'request');
    this.#refusal = refusal;
    this.#lastErrorStatus = refusal.status;
    this.#setLastError({ source, reason: refusal.reason, message: refusal.message, section: 'inbound' });
    return this.#onError();
  }

  /** The backend could not be reached or timed out (as the transport observed): runs on-error. */
  async onBackendFailure(
    reason: 'BackendConnectionFailure' | 'Timeout',
    message: string,
  ): Promise<FinalResponse> {
    this.#advance('forwarded', 'response');
    this.#setLastError({ source: 'forward-request', reason, message, section: 'backend' });
    this.#lastErrorStatus = reason === 'Timeout' ? 504 : 502;
    return this.#onError();
  }

  #advance(from: RunState, to: RunState): void {
    if (this.#state !== from)
      throw new TypeError(`pipeline run is in state ${this.#state}, expected ${from}`);
    this.#state = to;
  }

  async #section(section: Section): Promise<'next' | 'respond' | 'error'> {
    this.run.section = section;
    try {
      return await this.#runSection(section);
    } catch (err) {
      this.#recordFailure(err, section);
      return 'error';
    }
  }

  /** The section's statements, inside what an observer keeps for the section (a span) when one watches this run. */
  #runSection(section: Section): Flow | Promise<Flow> {
    const statements = this.pipeline.sections[section];
    const observer = this.services.observer;
    if (observer?.inSection && observer.observes(this.run))
      return observer.inSection(this.run, () => statements(this.run));
    return statements(this.run);
  }

  #recordFailure(err: unknown, section: Section): void {
    const site = err instanceof StatementFailure ? err.site : undefined;
    const cause = err instanceof StatementFailure ? err.cause : err;
    let reason: string;
    let message: string;
    if (cause instanceof PolicyError) {
      reason = cause.reason;
      message = cause.message;
      this.#lastErrorStatus = cause.status;
      this.#refusal = cause;
    } else if (
      cause instanceof ExpressionError ||
      cause instanceof TypeError ||
      cause instanceof RangeError
    ) {
      // Expression failures and invalid values an expression produced: API Management's evaluation failure.
      reason = 'ExpressionValueEvaluationFailure';
      message = cause instanceof ExpressionError ? cause.reason : cause.message;
      this.#lastErrorStatus = 500;
    } else {
      reason = 'InternalError';
      message = 'An internal error occurred while processing the request.';
      this.#lastErrorStatus = 500;
      this.services.logger.error('policy statement failed', {
        requestId: this.run.context.requestId.value,
        element: site?.element,
        path: site?.path,
        error: this.#redact(cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)),
      });
    }
    this.#setLastError({
      source: site?.element ?? section,
      reason,
      message,
      section,
      scope: site?.scope ?? '',
      path: site?.path ?? '',
      policyId: site?.policyId ?? '',
    });
  }

  #refusal: PolicyError | undefined;

  #setLastError(init: Partial<LastErrorInfo>): void {
    const message = init.message === undefined ? undefined : this.#redact(init.message);
    this.run.context.lastError = new LastErrorInfo({
      ...init,
      ...(message === undefined ? {} : { message }),
    });
  }

  #redact(text: string): string {
    return this.run.redact(text);
  }

  /** Builds API Management's default error response, then lets on-error change it. */
  async #onError(): Promise<FinalResponse> {
    const status = this.#lastErrorStatus;
    const refusal = this.#refusal;
    const message =
      refusal?.clientMessage ?? (status >= 500 ? 'Internal server error' : reasonPhrase(status));
    const headers = new HeaderCollection([['Content-Type', 'application/json; charset=utf-8']]);
    for (const [name, value] of refusal?.headers ?? []) headers.append(name, value);
    this.run.context.response = new ResponseModel({
      statusCode: status,
      statusReason: reasonPhrase(status),
      headers,
      body: refusal?.body ?? JSON.stringify({ statusCode: status, message }),
    });
    this.run.responseBodyChanged = true;
    this.run.section = 'on-error';
    try {
      await this.#runSection('on-error');
    } catch (err) {
      // A failing on-error section does not run again; the client gets a plain 500 and the log the details.
      this.services.logger.error('on-error section failed', {
        requestId: this.run.context.requestId.value,
        error: this.#redact(err instanceof Error ? err.message : String(err)),
      });
      this.run.context.response = new ResponseModel({
        statusCode: 500,
        statusReason: reasonPhrase(500),
        headers: new HeaderCollection([['Content-Type', 'application/json; charset=utf-8']]),
        body: JSON.stringify({ statusCode: 500, message: 'Internal server error' }),
      });
    }
    return this.#final(true);
  }

  #final(bodyChanged: boolean): FinalResponse {
    this.#state = 'done';
    const response = this.run.context.response ?? new ResponseModel({ statusCode: 200, statusReason: 'OK' });
    for (const [name, value] of this.run.responseHeaderAdditions) response.headers.set(name, value);
    // The response is final: release held slots and count what depended on it, without delaying the answer.
    void this.run.end();
    return {
      status: response.statusCode,
      reason: response.statusReason,
      headers: serializeHeaders(response.headers),
      body: response.body?.bytes ?? Buffer.alloc(0),
      bodyChanged,
    };
  }
}
