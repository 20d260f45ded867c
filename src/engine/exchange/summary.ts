import { traceRequestHeader } from '../../envoy/contract.js';
import { firstHeader, type HeaderChange, type HeaderFields } from '../../extproc/headers.js';
import type { Logger, Pipeline, PipelineRun, TraceEntry } from '../../policy/index.js';
import { redactFields, redactUrl } from '../../redact.js';
import { type TraceRouter, traceKeyMatches } from '../trace.js';
import type { TraceStep } from '../trace-steps.js';

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
  /** The policies answered from the response cache (cache-lookup, a semantic cache lookup): the backend was not called. */
  readonly cached?: boolean;
  readonly lastError?: { source: string; reason: string; message: string };
  /** From the stream's start (the request headers) to its end, backend included. */
  readonly durationMs?: number;
}

/**
 * Per-request debug tracing: a request whose `x-portcullis-trace` header carries this key is traced — its trace
 * entries, outcome and LastError go to the log as one `debug-trace` line, and the response names the request id.
 */
export interface DebugTrace {
  readonly key: string;
  readonly router: TraceRouter;
  readonly logger: Logger;
}

/** Where a finished exchange's summary goes. */
export interface SummaryTargets {
  /** Called once per finished exchange with its summary, e.g. to write the access log. */
  readonly onExchangeEnd?: (summary: ExchangeSummary) => void;
  readonly debugTrace?: DebugTrace;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * What the access log (and a traced request's `debug-trace` line) will say of one exchange, gathered as the
 * exchange learns it: its ids, the API and operation, what the engine did with it, the status.
 */
export class ExchangeRecord {
  private summary: Mutable<ExchangeSummary> = { requestId: '', method: '', path: '', outcome: 'abandoned' };
  /** When the stream started, for the exchange's duration. */
  private readonly startedAt = performance.now();
  /** Set when an operator switched debug tracing on for this request. */
  private traceCollector: { finish(): TraceEntry[]; steps(): TraceStep[] } | undefined;
  /** The matched API's key query parameter, a credential the logged path must not show. */
  private keyQuery: string | undefined;
  /** The pipeline that ran for the operation, shown in the debug trace. */
  private pipeline: Pipeline | undefined;

  /**
   * The request headers arrived: what was asked, under which ids. A request whose `x-portcullis-trace` header
   * carries the configured key is traced: its steps and entries are collected for its `debug-trace` line.
   */
  start(
    request: { requestId: string; traceId: string | undefined; method: string; path: string },
    headers: HeaderFields,
    debugTrace: DebugTrace | undefined,
  ): void {
    const { requestId, traceId, method, path } = request;
    this.summary =
      traceId === undefined
        ? { requestId, method, path, outcome: 'abandoned' }
        : { requestId, traceId, method, path, outcome: 'abandoned' };
    if (debugTrace && traceKeyMatches(firstHeader(headers, debugTraceHeader), debugTrace.key))
      this.traceCollector = debugTrace.router.collect(requestId);
  }

  get tracing(): boolean {
    return this.traceCollector !== undefined;
  }

  /** The method the client sent. */
  get method(): string {
    return this.summary.method;
  }

  /** The path matched one of the configuration's APIs (its key query parameter is redacted from the log). */
  matchedApi(keyQuery: string): void {
    this.keyQuery = keyQuery;
  }

  /** The request was described for the API's policies. */
  admitted(apiId: string): void {
    this.summary.api = apiId;
  }

  operationEntered(operationId: string, pipeline: Pipeline): void {
    this.summary.operation = operationId;
    this.pipeline = pipeline;
  }

  notAnApi(): void {
    this.summary.outcome = 'not-an-api';
  }

  forwarded(): void {
    this.summary.outcome = 'forwarded';
  }

  /** The status the client gets (outbound's, on a response Envoy passes on). */
  status(status: number): void {
    this.summary.status = status;
  }

  /** The engine answered the client itself; `lastError` says why when no policy ran to say it. */
  responded(status: number, lastError?: ExchangeSummary['lastError']): void {
    this.summary.outcome = 'responded';
    this.summary.status = status;
    if (lastError) this.summary.lastError = lastError;
  }

  /** The trace id header on a traced request's answer. */
  traceHeaders(): HeaderChange[] {
    return this.traceCollector ? [{ name: debugTraceIdHeader, value: this.summary.requestId }] : [];
  }

  /** The stream is over: the summary goes to `onExchangeEnd`, a traced request's line to the trace logger. */
  finish(targets: SummaryTargets, run: PipelineRun | undefined): void {
    const lastError = run?.context.lastError;
    // The access log shows what was asked, not the credentials it carried (the API's own key parameter too).
    const keyQuery = this.keyQuery === undefined ? undefined : [this.keyQuery];
    const summary: ExchangeSummary = {
      ...this.summary,
      path: redactUrl(this.summary.path, keyQuery),
      durationMs: Math.round((performance.now() - this.startedAt) * 1000) / 1000,
      ...(run?.run.servedFromCache === true ? { cached: true } : {}),
      ...(lastError?.reason
        ? { lastError: { source: lastError.source, reason: lastError.reason, message: lastError.message } }
        : {}),
    };
    targets.onExchangeEnd?.(summary);
    if (this.traceCollector) {
      const steps = this.traceCollector.steps();
      const entries = this.traceCollector.finish();
      const secrets = run?.run.secrets;
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
      targets.debugTrace?.logger.info(
        'debug-trace',
        secrets === undefined ? fields : redactFields(fields, 5, (text) => secrets.redact(text)),
      );
    }
  }
}
