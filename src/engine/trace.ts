import { timingSafeEqual } from 'node:crypto';
import type {
  BranchChoice,
  Logger,
  ObservedRun,
  PolicyObserver,
  RunWatch,
  StatementOutcome,
  StatementSite,
  TraceEntry,
  TraceSink,
} from '../policy/index.js';
import { redactText } from '../redact.js';
import { StepRecorder, type TraceStep } from './trace-steps.js';

/**
 * Where policy trace entries (the `trace` element, `context.Trace`) go: to the request's debug trace when an
 * operator switched tracing on for that request, else to the log as one line each. As the policies' observer it
 * records the steps (trace-steps.ts) of the requests being traced, and ignores the others.
 */
export class TraceRouter implements TraceSink, PolicyObserver {
  private readonly collectors = new Map<string, TraceEntry[]>();
  private readonly recorders = new Map<string, StepRecorder>();

  constructor(private readonly logger: Logger) {}

  write(traced: TraceEntry, logger: Logger = this.logger): void {
    // A policy may trace what it read (a header, the URL): credentials in it never reach a log or a debug trace.
    const entry: TraceEntry = {
      ...traced,
      message: redactText(traced.message),
      metadata: traced.metadata.map(([name, value]) => [name, redactText(value)] as const),
    };
    const collector = this.collectors.get(entry.requestId);
    if (collector) collector.push(entry);
    else {
      logger.info('trace', {
        requestId: entry.requestId,
        source: entry.source,
        severity: entry.severity,
        trace: entry.message,
        metadata: Object.fromEntries(entry.metadata),
      });
    }
  }

  /** Starts collecting one request's entries and steps; `finish` returns them and stops. */
  collect(requestId: string): { finish(): TraceEntry[]; steps(): TraceStep[] } {
    const entries: TraceEntry[] = [];
    const recorder = new StepRecorder();
    this.collectors.set(requestId, entries);
    this.recorders.set(requestId, recorder);
    return {
      finish: () => {
        this.collectors.delete(requestId);
        this.recorders.delete(requestId);
        return entries;
      },
      steps: () => recorder.steps,
    };
  }

  private recorderOf(run: ObservedRun): StepRecorder | undefined {
    return this.recorders.size === 0 ? undefined : this.recorders.get(run.context.requestId.value);
  }

  observes(run: ObservedRun): boolean {
    return this.recorderOf(run) !== undefined;
  }

  runStarted(run: ObservedRun): void {
    this.recorderOf(run)?.runStarted(run);
  }

  statementStarted(site: StatementSite, run: ObservedRun): void {
    this.recorderOf(run)?.statementStarted(site, run);
  }

  statementEnded(site: StatementSite, run: ObservedRun, outcome: StatementOutcome, error?: unknown): void {
    this.recorderOf(run)?.statementEnded(site, run, outcome, error);
  }

  branchTaken(choice: BranchChoice, run: ObservedRun): void {
    this.recorderOf(run)?.branchTaken(choice, run);
  }

  watch(run: ObservedRun): RunWatch | undefined {
    return this.recorderOf(run)?.watch(run);
  }
}

/** Compares a presented trace key with the configured one in constant time. */
export function traceKeyMatches(presented: string | undefined, configured: string | undefined): boolean {
  if (!presented || !configured) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(configured);
  return a.length === b.length && timingSafeEqual(a, b);
}
