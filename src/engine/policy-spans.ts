/**
 * A span per policy section that runs (inbound, backend, outbound, on-error), child of the request's span
 * (exchange-spans.ts), and under it a span for each statement that costs time (a call out, a cache or counter round
 * trip, a token), active while the statement runs so what it calls continues it. APIM's `trace` element lands as an
 * event on the span active where it runs. Installed only when the engine traces: without a tracer no observer runs,
 * and sections and statements pay nothing.
 */

import { context, type Span, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import {
  type BranchChoice,
  type Logger,
  type ObservedRun,
  type PolicyObserver,
  type SectionFlow,
  type SectionResult,
  StatementFailure,
  type StatementOutcome,
  type StatementSite,
  type TraceEntry,
  type TraceSink,
} from '../policy/index.js';

/** The elements worth a span: each waits on something outside the engine's CPU. */
const timedElements = new Set([
  'send-request',
  'send-one-way-request',
  'forward-request',
  'cache-lookup',
  'cache-store',
  'cache-lookup-value',
  'cache-store-value',
  'cache-remove-value',
  'rate-limit',
  'rate-limit-by-key',
  'quota',
  'quota-by-key',
  'limit-concurrency',
  'azure-openai-token-limit',
  'llm-token-limit',
  'azure-openai-semantic-cache-lookup',
  'azure-openai-semantic-cache-store',
  'llm-semantic-cache-lookup',
  'llm-semantic-cache-store',
  'llm-content-safety',
  'authentication-managed-identity',
  'get-authorization-context',
  'validate-jwt',
  'validate-azure-ad-token',
  'log-to-eventhub',
  'wait',
]);

export class PolicySpans implements PolicyObserver {
  /** The open spans of each run's statements (a run's context identifies it; concurrent runs share sites). */
  private readonly open = new WeakMap<ObservedRun['context'], Map<StatementSite, Span>>();

  constructor(private readonly tracer: Tracer) {}

  observes(): boolean {
    return true;
  }

  runStarted(): void {}

  statementStarted(site: StatementSite, run: ObservedRun): void {
    if (!timedElements.has(site.element)) return;
    // Started in the phase's context, which exchange-spans.ts made the request span's.
    const span = this.tracer.startSpan(site.element, {
      attributes: {
        'portcullis.policy.section': site.section,
        'portcullis.policy.scope': site.scope,
        'portcullis.policy.path': site.path,
        'code.filepath': site.location.file,
        'code.lineno': site.location.line,
      },
    });
    let spans = this.open.get(run.context);
    if (!spans) {
      spans = new Map();
      this.open.set(run.context, spans);
    }
    spans.set(site, span);
  }

  statementEnded(site: StatementSite, run: ObservedRun, outcome: StatementOutcome, error?: unknown): void {
    const spans = this.open.get(run.context);
    const span = spans?.get(site);
    if (!span) return;
    spans!.delete(site);
    span.setAttribute('portcullis.policy.outcome', outcome);
    if (outcome === 'failed')
      span.setStatus({
        code: SpanStatusCode.ERROR,
        // A failing expression may quote what it was given: a secret named value, the request's credential.
        message: run.redact(error instanceof Error ? error.message : String(error)),
      });
    span.end();
  }

  branchTaken(_choice: BranchChoice): void {}

  /** The section's span, current while its statements run (they start theirs under it). */
  inSection(run: ObservedRun, section: () => SectionResult): Promise<SectionFlow> {
    const span = this.tracer.startSpan(run.section, {
      attributes: { 'portcullis.policy.section': run.section },
    });
    return context.with(trace.setSpan(context.active(), span), async () => {
      try {
        const flow = await section();
        span.setAttribute('portcullis.policy.outcome', flow);
        return flow;
      } catch (error) {
        // The section stops here and on-error runs (its own span, a sibling); the failing statement's span has
        // the message, the section's says where.
        span.setAttribute('portcullis.policy.outcome', 'error');
        span.setStatus({
          code: SpanStatusCode.ERROR,
          message:
            error instanceof StatementFailure
              ? `${error.site.element} failed (${error.site.path})`
              : 'the section failed',
        });
        throw error;
      } finally {
        span.end();
      }
    });
  }

  /** A timed statement's span, current while it runs: send-request's call carries it in `traceparent`. */
  inStatement<T>(site: StatementSite, run: ObservedRun, statement: () => T): T {
    const span = this.open.get(run.context)?.get(site);
    return span ? context.with(trace.setSpan(context.active(), span), statement) : statement();
  }
}

/** Both observers see every statement (the operator's debug trace and the spans). */
export function bothObservers(first: PolicyObserver, second: PolicyObserver): PolicyObserver {
  // Each observer that keeps a scope for a section or a statement gets it, the first one's outside the second's.
  const inSection = (run: ObservedRun, section: () => SectionResult): Promise<SectionFlow> => {
    const inner = second.inSection && second.observes(run) ? () => second.inSection!(run, section) : section;
    return first.inSection && first.observes(run) ? first.inSection(run, inner) : Promise.resolve(inner());
  };
  const inStatement = <T>(site: StatementSite, run: ObservedRun, statement: () => T): T => {
    const inner = second.inStatement ? () => second.inStatement!(site, run, statement) : statement;
    return first.inStatement ? first.inStatement(site, run, inner) : inner();
  };
  return {
    ...(first.inSection || second.inSection ? { inSection } : {}),
    ...(first.inStatement || second.inStatement ? { inStatement } : {}),
    observes: (run) => first.observes(run) || second.observes(run),
    runStarted: (run) => {
      if (first.observes(run)) first.runStarted(run);
      if (second.observes(run)) second.runStarted(run);
    },
    statementStarted: (site, run) => {
      first.statementStarted(site, run);
      second.statementStarted(site, run);
    },
    statementEnded: (site, run, outcome, error) => {
      first.statementEnded(site, run, outcome, error);
      second.statementEnded(site, run, outcome, error);
    },
    branchTaken: (choice, run) => {
      first.branchTaken(choice, run);
      second.branchTaken(choice, run);
    },
    // Values go to the first that shows them (spans do not).
    watch: (run) =>
      (first.observes(run) ? first.watch?.(run) : undefined) ??
      (second.observes(run) ? second.watch?.(run) : undefined),
  };
}

/** APIM's `trace` element (and `context.Trace`) as an event on the request's span, then wherever `sink` puts it. */
export function traceWithSpanEvents(sink: TraceSink): TraceSink {
  return {
    write(entry: TraceEntry, logger?: Logger) {
      trace.getSpan(context.active())?.addEvent('trace', {
        'portcullis.trace.source': entry.source,
        'portcullis.trace.severity': entry.severity,
        'portcullis.trace.message': entry.message,
        ...Object.fromEntries(
          entry.metadata.map(([name, value]) => [`portcullis.trace.metadata.${name}`, value]),
        ),
      });
      sink.write(entry, logger);
    },
  };
}
