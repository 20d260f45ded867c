/**
 * Every log line written while the engine handles a request carries its request id and trace id (src/log.ts): each
 * phase of the exchange runs inside the request's log fields, which the exchange fills in once it knows them (the
 * request id is decided in the request-headers phase).
 */

import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { Exchange, MessageHead } from '../extproc/exchange.js';
import { firstHeader } from '../extproc/headers.js';
import { type RequestLogFields, traceparentTraceId, withRequestLogFields } from '../log.js';

/** An exchange that fills in its request's log fields. */
export interface LoggingExchange extends Exchange {
  readonly logFields: RequestLogFields;
}

/** `inner`'s phases, each run with its log fields. */
export function withLogFields(inner: LoggingExchange): Exchange {
  const fields = inner.logFields;
  const exchange: Exchange = {
    requestHeaders: (head) => withRequestLogFields(fields, () => inner.requestHeaders(head)),
  };
  // Only the phases the inner exchange has: a phase Envoy is not asked for must stay absent.
  if (inner.requestBody)
    exchange.requestBody = (body, end) => withRequestLogFields(fields, () => inner.requestBody!(body, end));
  if (inner.requestTrailers)
    exchange.requestTrailers = (trailers) =>
      withRequestLogFields(fields, () => inner.requestTrailers!(trailers));
  if (inner.responseHeaders)
    exchange.responseHeaders = (head) => withRequestLogFields(fields, () => inner.responseHeaders!(head));
  if (inner.responseBody)
    exchange.responseBody = (body, end) => withRequestLogFields(fields, () => inner.responseBody!(body, end));
  if (inner.responseTrailers)
    exchange.responseTrailers = (trailers) =>
      withRequestLogFields(fields, () => inner.responseTrailers!(trailers));
  if (inner.end) exchange.end = () => withRequestLogFields(fields, () => inner.end!());
  return exchange;
}

/**
 * The trace a request belongs to: the active span's when the engine traces (the request's span, a child of Envoy's),
 * else the one the request's `traceparent` names.
 */
export function requestTraceId(head: MessageHead): string | undefined {
  const span = trace.getActiveSpan()?.spanContext();
  if (span !== undefined && isSpanContextValid(span)) return span.traceId;
  return traceparentTraceId(firstHeader(head.headers, 'traceparent'));
}
