/**
 * OpenTelemetry tracing for a Portcullis process (the engine, the service): one tracer provider per process, batching
 * its spans to the collector over OTLP/HTTP, sampling as Envoy decided (a parent's sampled flag is followed; a trace
 * started here keeps `samplingRatio` of them). Nothing here runs when `telemetry.otlp` is absent: callers hold no
 * tracer and take no span, so an untraced request pays nothing.
 */

import { randomUUID } from 'node:crypto';
import { context, propagation, type Span, type Tracer, trace } from '@opentelemetry/api';

/**
 * This process's identity among others of the same `service.name` (several engines under one `up`, replicas), on
 * its spans and its metrics: a collector keeps their cumulative series apart by it.
 */
export const serviceInstanceId = randomUUID();

export interface TraceExport {
  /** The collector's OTLP/HTTP traces URL (`…/v1/traces`). */
  readonly tracesUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  /** `service.name` of this process's spans. */
  readonly serviceName: string;
  readonly samplingRatio: number;
}

export interface ProcessTracing {
  readonly tracer: Tracer;
  /** Sends what is still buffered (a stopping process would lose its last spans otherwise). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

/** The trace context a W3C `traceparent` (and `tracestate`) carries, as the parent of a span started under it. */
export function incomingTraceContext(carrier: Readonly<Record<string, string | undefined>>) {
  return propagation.extract(context.active(), carrier, {
    get: (headers, key) => headers[key],
    keys: (headers) => Object.keys(headers),
  });
}

/** `traceparent` (and `tracestate`) of `span`, to put on an outgoing request. */
export function outgoingTraceHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), headers);
  return headers;
}
