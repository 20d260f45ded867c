/**
 * The steps of one pipeline run as a trace shows them: every element with where it was written, its outcome, its
 * time, the values of the policy expressions it evaluated and the variables it changed, and the branch each choose
 * took with its conditions' values. Values are shown cut to a safe length, with credentials removed: the request's
 * secret values wherever they occur (policy/request-secrets.ts: secret named values, the credentials it carried, the
 * tokens the gateway obtained and its policies stored), a credential header's or parameter's value, a variable that
 * holds a token, and anything that looks like one (redact.ts). One format for the live debug trace
 * (`x-portcullis-trace`, the `debug-trace` log line's `steps`) and for `portcullis run` and `portcullis test`.
 */
import { toDotNetString } from '../expr/index.js';
import {
  type BranchChoice,
  type ObservedRun,
  PolicyError,
  type PolicyObserver,
  type RunWatch,
  type Section,
  StatementFailure,
  type StatementOutcome,
  type StatementSite,
  tokenOf,
} from '../policy/index.js';
import { redactionMarker, redactText } from '../redact.js';

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
  /**
   * The values of the policy expressions the statement itself evaluated, by where they were written: `@attribute`,
   * a child's `child/@attribute`, an element's text by its name (`value`, `set-url`) or by the name its parent
   * gives it (set-header's header); a label met again gets ` (2)`, ` (3)` ….
   */
  values?: Record<string, string>;
  /** For a choose: which branch ran (`when[1]`, `otherwise`, `none`) and the conditions' values in order. */
  branch?: string;
  conditions?: readonly boolean[];
}

const at = (location: StatementSite['location']) => `${location.file}:${location.line}:${location.column}`;

/** At most this many characters of a value are shown (a body, a token list …): a trace is a log line. */
export const SHOWN_VALUE_CHARS = 200;
/** At most this many expression values are kept per step (a loop of values cannot grow a trace without end). */
const VALUES_PER_STEP = 16;

/**
 * A value as a trace shows it: a string quoted, anything else as .NET prints it; credentials removed (`redact`:
 * the run's secrets, then the shapes redact.ts knows), cut to SHOWN_VALUE_CHARS with the full length said.
 */
export function shownValue(value: unknown, redact: (text: string) => string = (text) => text): string {
  const whole = typeof value === 'string' ? value : toDotNetString(value);
  // Only the head is worked on; a credential's shape is matched within a margin past what is shown.
  const head = whole.length > SHOWN_VALUE_CHARS * 4 ? whole.slice(0, SHOWN_VALUE_CHARS * 4) : whole;
  const redacted = redactText(redact(head));
  const text = typeof value === 'string' ? JSON.stringify(redacted) : redacted;
  if (whole.length <= SHOWN_VALUE_CHARS && text.length <= SHOWN_VALUE_CHARS * 2) return text;
  return `${text.slice(0, SHOWN_VALUE_CHARS)}… (${whole.length} chars)`;
}

/**
 * Records the steps of the runs it observes, in the order statements start (a parent before its children). The
 * runs themselves are kept too: the last one's context (variables, LastError) is what a test checks.
 */
export class StepRecorder implements PolicyObserver {
  readonly steps: TraceStep[] = [];
  readonly runs: ObservedRun[] = [];
  readonly #open: { step: TraceStep; started: number; variables: Map<string, unknown>; index: number }[] = [];
  /** The watched run's secret values (ObservedRun.redact): removed from every value and message shown. */
  #redact: (text: string) => string = (text) => text;

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
    if (error !== undefined) step.error = describeError(error, this.#redact);
    const leaf = this.steps.length - 1 === open.index;
    if (leaf) {
      const changed: Record<string, string> = {};
      for (const [name, value] of run.context.variables.entries())
        if (!open.variables.has(name) || open.variables.get(name) !== value)
          // A token is a credential whatever its claims say (a policy reads those, and they are shown there).
          changed[name] = tokenOf(value) === undefined ? shownValue(value, this.#redact) : redactionMarker;
      if (Object.keys(changed).length > 0) step.variables = changed;
    }
  }

  watch(run: ObservedRun): RunWatch {
    this.#redact = (text) => run.redact(text);
    return { value: (label, value, credential) => this.#valueEvaluated(label, value, credential) };
  }

  #valueEvaluated(label: string, value: unknown, credential: boolean): void {
    // Evaluated outside any statement (the transport's retry condition): no step to show it with.
    const step = this.#open.at(-1)?.step;
    if (step === undefined) return;
    step.values ??= {};
    const values = step.values;
    if (Object.keys(values).length >= VALUES_PER_STEP) return;
    const own = label.startsWith(`${step.element}/@`) ? label.slice(step.element.length + 1) : label;
    let key = own;
    for (let seen = 2; Object.hasOwn(values, key); seen++) key = `${own} (${seen})`;
    values[key] = credential ? redactionMarker : shownValue(value, this.#redact);
  }

  branchTaken(choice: BranchChoice, _run: ObservedRun): void {
    const step = this.#open.at(-1)?.step;
    if (step === undefined) return;
    step.branch = typeof choice.taken === 'number' ? `when[${choice.taken + 1}]` : choice.taken;
    step.conditions = choice.conditions;
  }
}

/** `Reason: message` of a refusal (a nested statement's failure: its cause), credentials removed. */
function describeError(error: unknown, redact: (text: string) => string): string {
  const cause = error instanceof StatementFailure ? error.cause : error;
  const reason = cause instanceof PolicyError ? `${cause.reason}: ` : '';
  return redactText(redact(`${reason}${cause instanceof Error ? cause.message : String(cause)}`));
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
    if (step.values !== undefined)
      parts.push(
        Object.entries(step.values)
          .map(([label, value]) => `${label}=${value}`)
          .join(' '),
      );
    if (step.ms !== undefined) parts.push(`${step.ms} ms`);
    return `${parts.join('  ')}  @ ${step.at}`;
  });
}
