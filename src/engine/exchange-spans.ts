/**
 * One span per request through the engine: a child of Envoy's span for the ext_proc call (the stream's
 * `traceparent`), or of the request's own `traceparent` when the Envoy in front does not trace. Each phase runs in
 * the span's context, so what the policy services start (send-request, cache, Redis, identity) is its child.
 */

import {
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Exchange, ExchangeFactory, MessageHead, StreamContext } from '../extproc/exchange.js';
import { incomingTraceContext } from '../tracing.js';

/** The exchanges of `inner`, each inside its request span. */
export function tracedExchanges(
  inner: ExchangeFactory,
  tracer: Tracer,
  /** Envoy records every trace (samplingRatio 1): see `sampledByEnvoy`. */
  envoySamplesAll: boolean,
): ExchangeFactory {
  return (stream?: StreamContext) => new TracedExchange(inner(stream), tracer, stream, envoySamplesAll);
}

class TracedExchange implements Exchange {
  private span: Span | undefined;
  private spanContext: Context | undefined;

  constructor(
    private readonly inner: Exchange,
    private readonly tracer: Tracer,
    private readonly stream: StreamContext | undefined,
    private readonly envoySamplesAll: boolean,
  ) {
    // Only the phases the inner exchange has: a phase Envoy is not asked for must stay absent.
    if (inner.requestBody) this.requestBody = (body, end) => this.within(() => inner.requestBody!(body, end));
    if (inner.requestTrailers)
      this.requestTrailers = (trailers) => this.within(() => inner.requestTrailers!(trailers));
    if (inner.responseHeaders)
      this.responseHeaders = (head) => {
        const status = Number(head.headers.get(':status')?.[0]);
        if (Number.isInteger(status)) {
          this.span?.setAttribute('http.response.status_code', status);
          if (status >= 500) this.span?.setStatus({ code: SpanStatusCode.ERROR });
        }
        return this.within(() => inner.responseHeaders!(head));
      };
    if (inner.responseBody)
      this.responseBody = (body, end) => this.within(() => inner.responseBody!(body, end));
    if (inner.responseTrailers)
      this.responseTrailers = (trailers) => this.within(() => inner.responseTrailers!(trailers));
  }

  requestBody?: Exchange['requestBody'];
  requestTrailers?: Exchange['requestTrailers'];
  responseHeaders?: Exchange['responseHeaders'];
  responseBody?: Exchange['responseBody'];
  responseTrailers?: Exchange['responseTrailers'];

  requestHeaders(head: MessageHead) {
    const first = (name: string) => head.headers.get(name)?.[0];
    const parent = incomingTraceContext(
      this.stream?.traceHeaders
        ? this.envoySamplesAll
          ? sampledByEnvoy(this.stream.traceHeaders)
          : this.stream.traceHeaders
        : { traceparent: first('traceparent'), tracestate: first('tracestate') },
    );
    const method = first(':method') ?? 'GET';
    this.span = this.tracer.startSpan(
      `policy ${method}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': method,
          'url.path': (first(':path') ?? '/').split('?')[0]!,
          ...(first(':authority') ? { 'server.address': first(':authority') } : {}),
        },
      },
      parent,
    );
    this.spanContext = trace.setSpan(parent, this.span);
    return this.within(() => this.inner.requestHeaders(head));
  }

  end(): void {
    this.inner.end?.();
    this.span?.end();
  }

  private within<T>(phase: () => T): T {
    const active = this.spanContext;
    if (!active) return phase();
    try {
      return context.with(active, phase);
    } catch (error) {
      this.span?.recordException(error as Error);
      this.span?.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    }
  }
}

/**
 * Envoy (1.40) marks the span of its ext_proc call not sampled (flags `00`) even inside a trace it records, and does
 * not export it: following that flag would drop every engine span. The stream carries `00` whether Envoy records the
 * request or not, so the flag is overridden only when Envoy records every trace (samplingRatio 1); with a smaller
 * ratio the engine follows the flag and records nothing under Envoy's traces (a known gap, not orphan spans).
 */
function sampledByEnvoy(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const traceparent = headers.traceparent;
  if (traceparent === undefined || !/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/.test(traceparent)) return headers;
  return { ...headers, traceparent: `${traceparent.slice(0, -2)}01` };
}
