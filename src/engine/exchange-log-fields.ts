/**
 * Every log line written while the engine handles a request carries its request id and trace id (src/log.ts): the
 * request's pipelines get policy services whose logger and trace sink add them. Explicitly, not through
 * AsyncLocalStorage, which on Node 20 costs every promise of the process (withRequestLogFields says how much).
 * Every text they log or trace passes through the request's secret values (policy/request-secrets.ts) on the way.
 */

import { isSpanContextValid, trace } from '@opentelemetry/api';
import type { MessageHead } from '../extproc/exchange.js';
import { firstHeader } from '../extproc/headers.js';
import { type RequestLogFields, requestLogger, traceparentTraceId } from '../log.js';
import type { PolicyServices, RequestSecrets, TraceEntry } from '../policy/index.js';
import { redactText } from '../redact.js';

/**
 * `services` as one request's pipelines see them: what they log carries the request's ids, and neither a log line
 * nor a trace entry (the `trace` element, context.Trace) carries its secret values. `secrets`: the request's, once
 * its pipeline runs (read when a text is written).
 */
export function requestServices(
  services: PolicyServices,
  fields: RequestLogFields,
  secrets: () => RequestSecrets | undefined,
): PolicyServices {
  const sink = services.trace;
  // The logger removes the shapes of credentials itself; the request's values only the request knows.
  const logger = requestLogger(services.logger, fields, (text) => secrets()?.redact(text) ?? text);
  // A trace entry the sink logs goes to the request's logger, with the request's ids; every sink (the debug trace,
  // a span's event) gets it without credentials.
  return {
    ...services,
    logger,
    trace: { write: (entry) => sink.write(redactedEntry(entry, secrets()), logger) },
  };
}

function redactedEntry(entry: TraceEntry, secrets: RequestSecrets | undefined): TraceEntry {
  const redact = (text: string) => redactText(secrets === undefined ? text : secrets.redact(text));
  return {
    ...entry,
    message: redact(entry.message),
    metadata: entry.metadata.map(([name, value]) => [name, redact(value)] as const),
  };
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
