import { timingSafeEqual } from 'node:crypto';
import type { Logger, TraceEntry, TraceSink } from '../policy/index.js';
import { redactText } from '../redact.js';

/**
 * Where policy trace entries (the `trace` element, `context.Trace`) go: to the request's debug trace when an
 * operator switched tracing on for that request, else to the log as one line each.
 */
export class TraceRouter implements TraceSink {
  private readonly collectors = new Map<string, TraceEntry[]>();

  constructor(private readonly logger: Logger) {}

  write(traced: TraceEntry): void {
    // A policy may trace what it read (a header, the URL): credentials in it never reach a log or a debug trace.
    const entry: TraceEntry = {
      ...traced,
      message: redactText(traced.message),
      metadata: traced.metadata.map(([name, value]) => [name, redactText(value)] as const),
    };
    const collector = this.collectors.get(entry.requestId);
    if (collector) collector.push(entry);
    else {
      this.logger.info('trace', {
        requestId: entry.requestId,
        source: entry.source,
        severity: entry.severity,
        trace: entry.message,
        metadata: Object.fromEntries(entry.metadata),
      });
    }
  }

  /** Starts collecting one request's entries; `finish` returns them and stops. */
  collect(requestId: string): { finish(): TraceEntry[] } {
    const entries: TraceEntry[] = [];
    this.collectors.set(requestId, entries);
    return {
      finish: () => {
        this.collectors.delete(requestId);
        return entries;
      },
    };
  }
}

/** Compares a presented trace key with the configured one in constant time. */
export function traceKeyMatches(presented: string | undefined, configured: string | undefined): boolean {
  if (!presented || !configured) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(configured);
  return a.length === b.length && timingSafeEqual(a, b);
}
