/**
 * The steps of one pipeline run as a trace shows them: every element with where it was written, its outcome, its
 * time and the variables it changed, and the branch each choose took with its conditions' values. One format for
 * the live debug trace (`x-portcullis-trace`, the `debug-trace` log line's `steps`) and for `portcullis run` and
 * `portcullis test`.
 */
import { toDotNetString } from '../expr/index.js';
import {
  type BranchChoice,
  type ObservedRun,
  PolicyError,
  type PolicyObserver,
  type Section,
  StatementFailure,
  type StatementOutcome,
  type StatementSite,
} from '../policy/index.js';
import { redactText } from '../redact.js';

export interface TraceStep {
  readonly element: string;
  /** `file:line:col` of the element (of the `when`/`otherwise` for a branch). */
  readonly at: string;
  readonly section: Section;
  /** Nesting: 0 for a statement of the section itself, 1 inside a choose branch or a return-response, … */
  readonly depth: number;
  outcome?: StatementOutcome;
  /** Milliseconds the statement took, its nested statements included. */
  ms?: number;
  /** For a refusal or failure: why. */
  error?: string;
  /** Variables the statement set or changed (leaf statements only: a parent's are its children's). */
  variables?: Record<string, string>;
  /** For a choose: which branch ran (`when[1]`, `otherwise`, `none`) and the conditions' values in order. */
  branch?: string;
  conditions?: readonly boolean[];
}

const at = (location: StatementSite['location']) => `${location.file}:${location.line}:${location.column}`;

/** A variable's value as a trace shows it (credentials removed). */
export function shownValue(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : toDotNetString(value);
  return redactText(text);
}

/**
 * Records the steps of the runs it observes, in the order statements start (a parent before its children). The
 * runs themselves are kept too: the last one's context (variables, LastError) is what a test checks.
 */
export class StepRecorder implements PolicyObserver {
  readonly steps: TraceStep[] = [];
  readonly runs: ObservedRun[] = [];
  readonly #open: { step: TraceStep; started: number; variables: Map<string, unknown>; index: number }[] = [];

  constructor(private readonly onRunStarted?: (run: ObservedRun) => void) {}

  observes(): boolean {
    return true;
  }

  runStarted(run: ObservedRun): void {
    this.runs.push(run);
    this.onRunStarted?.(run);
  }

  statementStarted(site: StatementSite, run: ObservedRun): void {
    const step: TraceStep = {
      element: site.element,
      at: at(site.location),
      section: site.section,
      depth: this.#open.length,
    };
    this.steps.push(step);
    this.#open.push({
      step,
      started: performance.now(),
      variables: new Map(run.context.variables.entries()),
      index: this.steps.length - 1,
    });
  }

  statementEnded(site: StatementSite, run: ObservedRun, outcome: StatementOutcome, error?: unknown): void {
    const open = this.#open.pop();
    if (open === undefined || open.step.element !== site.element) return;
    const { step } = open;
    step.outcome = outcome;
    step.ms = Math.round((performance.now() - open.started) * 1000) / 1000;
    if (error !== undefined) step.error = describeError(error);
    const leaf = this.steps.length - 1 === open.index;
    if (leaf) {
      const changed: Record<string, string> = {};
      for (const [name, value] of run.context.variables.entries())
        if (!open.variables.has(name) || open.variables.get(name) !== value)
          changed[name] = shownValue(value);
      if (Object.keys(changed).length > 0) step.variables = changed;
    }
  }

  branchTaken(choice: BranchChoice, _run: ObservedRun): void {
    const step = this.#open.at(-1)?.step;
    if (step === undefined) return;
    step.branch = typeof choice.taken === 'number' ? `when[${choice.taken + 1}]` : choice.taken;
    step.conditions = choice.conditions;
  }
}

/** `Reason: message` of a refusal (a nested statement's failure: its cause), credentials removed. */
function describeError(error: unknown): string {
  const cause = error instanceof StatementFailure ? error.cause : error;
  const reason = cause instanceof PolicyError ? `${cause.reason}: ` : '';
  return redactText(`${reason}${cause instanceof Error ? cause.message : String(cause)}`);
}

/** The steps as readable lines, one per step, indented by nesting. */
export function formatSteps(steps: readonly TraceStep[]): string[] {
  return steps.map((step) => {
    const parts = [`${'  '.repeat(step.depth)}${step.section} ${step.element}`, step.outcome ?? 'unfinished'];
    if (step.branch !== undefined)
      parts.push(`${step.branch} (conditions: ${step.conditions?.join(', ') || 'none'})`);
    if (step.error !== undefined) parts.push(step.error);
    if (step.variables !== undefined)
      parts.push(
        Object.entries(step.variables)
          .map(([name, value]) => `${name}=${value}`)
          .join(' '),
      );
    if (step.ms !== undefined) parts.push(`${step.ms} ms`);
    return `${parts.join('  ')}  @ ${step.at}`;
  });
}
