/**
 * Every log line written while the engine handles a request carries its request id and trace id (src/log.ts): the
 * request's pipelines get policy services whose logger and trace sink add them. Explicitly, not through
 * AsyncLocalStorage, which on Node 20 costs every promise of the process (withRequestLogFields says how much).
 */

import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { MessageHead } from '../extproc/exchange.js';
import { firstHeader } from '../extproc/headers.js';
import { type RequestLogFields, requestLogger, traceparentTraceId } from '../log.js';
import type { PolicyServices } from '../policy/index.js';

/** `services` as one request's pipelines see them: what they log carries the request's ids. */
export function requestServices(services: PolicyServices, fields: RequestLogFields): PolicyServices {
  const sink = services.trace;
  const logger = requestLogger(services.logger, fields);
  // A trace entry the sink logs goes to the request's logger, with the request's ids.
  return { ...services, logger, trace: { write: (entry) => sink.write(entry, logger) } };
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
