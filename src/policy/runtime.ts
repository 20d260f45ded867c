/**
 * What compiled statements receive per request, and how they end: `next` to go on, `respond` to stop the
 * pipeline and answer with `context.response` (return-response, mock-response, a cache hit, a CORS preflight).
 * A refusal is thrown as PolicyError and sends the pipeline to on-error.
 */
import type { PolicyContext, RequestModel, ResponseModel } from '../expr/index.js';
import { redactText } from '../redact.js';
import type { RequestSecrets } from './request-secrets.js';
import type { Section } from './schema.js';
import type { CachingType, PolicyServices, PoolSession, RunWatch, StatementSite } from './services.js';
import type { DeclaredResponse } from './shared/mock-content.js';
import type { OperationDefinition } from './shared/operation-definition.js';

export type { StatementSite } from './services.js';

export type Flow = 'next' | 'respond';

export type Statement = (run: RunContext) => Flow | Promise<Flow>;

/** How the backend is called, recorded by forward-request for the transport. */
export interface ForwardSettings {
  /** Whole-request timeout in milliseconds. */
  readonly timeoutMs: number;
  readonly continueTimeoutMs: number | undefined;
  readonly httpVersion: '1' | '2or1' | '2';
  readonly followRedirects: boolean;
  readonly bufferRequestBody: boolean;
  readonly bufferResponse: boolean;
  readonly failOnErrorStatusCode: boolean;
}

/** Retries around forward-request, recorded for the transport (Envoy retries the upstream call). */
export interface RetrySettings {
  readonly count: number;
  readonly intervalSeconds: number;
  readonly maxIntervalSeconds: number | undefined;
  readonly deltaSeconds: number | undefined;
  readonly firstFastRetry: boolean;
  /** Evaluated by the transport against the context after each backend answer. */
  readonly condition: (run: RunContext) => boolean;
}

/** Where the request goes: set-backend-service picks a URL or a named backend. */
export interface BackendSelection {
  readonly baseUrl: string | undefined;
  readonly backendId: string | undefined;
  /** The pool `backendId` was chosen from: a retry of the call chooses again. */
  readonly poolId?: string;
  /** The client's session of that pool, when it has session affinity (the answer may set its cookie). */
  readonly session?: PoolSession;
}

/** A refusal or failure with API Management's reason; the runner turns it into context.LastError. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  constructor(
    /** LastError.Reason, e.g. `TokenExpired`. */
    readonly reason: string,
    /** LastError.Message; shown to the client only through an on-error section that echoes it. */
    message: string,
    /** Response status when no on-error section changes it. */
    readonly status: number,
    /** The body message of API Management's default error response for this refusal. */
    readonly clientMessage: string = message,
    /** Headers API Management adds to the default error response (e.g. WWW-Authenticate). */
    readonly headers: readonly (readonly [string, string])[] = [],
  ) {
    super(message);
  }
}

/** The state of one request as it moves through the pipeline. */
export class RunContext {
  section: Section = 'inbound';
  /** Set by forward-request in the backend section; undefined means the backend is not called. */
  forward: ForwardSettings | undefined;
  retry: RetrySettings | undefined;
  backend: BackendSelection;
  /** The key cache-lookup computed, used by cache-store in outbound; undefined when lookup did not run. */
  cacheKey: string | undefined;
  /** cache-lookup's caching-type, which cache-store (having no such attribute) uses too. */
  cachingType: CachingType = 'prefer-external';
  /**
   * The partition and prompt embedding llm-semantic-cache-lookup missed with, for llm-semantic-cache-store in
   * outbound; undefined when no lookup ran or it skipped the request (not a prompt, streamed, too long).
   */
  semanticCacheEntry: { readonly partition: string; readonly embedding: readonly number[] } | undefined;
  /** A cache lookup answered the request from the cache (the backend is not called): counted as a cache hit. */
  servedFromCache = false;
  /** Downstream Cache-Control that cache-lookup asked for, applied to the response by cache-store. */
  downstreamCacheControl: string | undefined;
  /** Set when the request body was replaced, so the transport knows to send the new one. */
  requestBodyChanged = false;
  responseBodyChanged = false;
  /** Headers added to whatever response the client gets (cors on an actual cross-origin request). */
  readonly responseHeaderAdditions: [string, string][] = [];
  /**
   * What watches the backend's response body as it passes to the client unchanged (llm-token-limit reads the
   * token usage from it). The transport feeds them only for pipelines whose elements declared `watchesResponseBody`.
   */
  readonly responseWatchers: ResponseBodyWatcher[] = [];
  /** The response return-response is building (its set-status/set-header/set-body children act on it). */
  pendingResponse: ResponseModel | undefined;
  /** The request send-request is building. */
  pendingRequest: RequestModel | undefined;
  /** The responses the operation's definition declares, which mock-response answers from (none: empty content). */
  declaredResponses: readonly DeclaredResponse[] = [];
  /**
   * What the matched operation's definition declares, which the validation policies check the messages against;
   * undefined when no operation matched (an API's on-error for an unknown operation).
   */
  operationDefinition: OperationDefinition | undefined;
  /** Set when an observer shows this run's values (a trace, a test); undefined on live traffic. */
  watch: RunWatch | undefined;

  readonly #endTasks: EndTask[] = [];
  #ended: Promise<void> | undefined;

  constructor(
    readonly context: PolicyContext,
    readonly services: PolicyServices,
    /** The request's secret values (request-secrets.ts): a token a statement obtains is added here. */
    readonly secrets: RequestSecrets,
  ) {
    this.backend = { baseUrl: undefined, backendId: undefined };
  }

  /**
   * A text of this request as it may leave the run (LastError.Message, a log line, a trace): its secret values and
   * every credential shape (redact.ts) replaced.
   */
  redact(text: string): string {
    return redactText(this.secrets.redact(text));
  }

  /**
   * Registers work for when the request is over: limit-concurrency gives back its slot, a limit counts what
   * depends on the response (increment-condition, bandwidth). A task registered after the end runs at once.
   */
  atEnd(task: EndTask): void {
    this.#endTasks.push(task);
    if (this.#ended !== undefined) this.#ended = this.#ended.then(() => this.#runEndTasks());
  }

  /**
   * Runs the end tasks once, newest first. The runner calls it with the final response in place; the transport
   * (through PipelineRun.end) when the request ended without one. Tasks start synchronously, so in-process
   * counters are updated before the next request is looked at; the promise never rejects (failures are logged).
   */
  end(): Promise<void> {
    this.#ended ??= this.#runEndTasks();
    return this.#ended;
  }

  async #runEndTasks(): Promise<void> {
    // Most requests leave no end task.
    if (this.#endTasks.length === 0) return;
    const started = this.#endTasks
      .splice(0)
      .reverse()
      .map((task) => {
        try {
          return Promise.resolve(task(this));
        } catch (error) {
          return Promise.reject(error);
        }
      });
    for (const result of await Promise.allSettled(started)) {
      if (result.status === 'rejected')
        this.services.logger.warn('end-of-request task failed', {
          requestId: this.context.requestId.value,
          error: result.reason instanceof Error ? result.reason.message : String(result.reason),
        });
    }
  }
}

/**
 * Sees the backend's response body piece by piece, in order, as the transport passes it on (a streamed answer is
 * never held for it). `last` marks the final piece (possibly empty); what it returns then is awaited before that
 * piece goes on, so what a watcher counts is counted before the client has the whole answer. A watcher keeps no
 * more of the body than it needs.
 */
export interface ResponseBodyWatcher {
  chunk(bytes: Buffer, last: boolean): void | Promise<void>;
}

/** Work a statement leaves for the end of the request (see RunContext.atEnd). */
export type EndTask = (run: RunContext) => void | Promise<void>;

/** An error annotated with the statement where it happened (the innermost one wins). */
export class StatementFailure extends Error {
  override readonly name = 'StatementFailure';
  constructor(
    override readonly cause: unknown,
    readonly site: StatementSite,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}
