import { type Diagnostic, DiagnosticsError, formatDiagnostic } from '../diagnostic.js';

/**
 * Load-time problems in policy documents: the shared Diagnostic with a code. Every diagnostic names the file, the
 * 1-based line and column in the ORIGINAL text (before named values were substituted), the element path (such as
 * `policies/inbound/choose[1]/when[2]`, empty when the problem is not inside an element) and the rule that was broken.
 */
export interface PolicyDiagnostic extends Diagnostic<DiagnosticCode> {
  readonly line: number;
  readonly column: number;
  readonly code: DiagnosticCode;
}

export type DiagnosticCode =
  | 'xml'
  | 'doctype'
  | 'expression'
  | 'named-value'
  | 'unknown-element'
  | 'unknown-attribute'
  | 'misplaced-element'
  | 'attribute'
  | 'children'
  | 'not-implemented'
  | 'not-supported'
  | 'fragment'
  | 'base';

export { formatDiagnostic };

/** Thrown when a document (or a pipeline built from documents) has at least one diagnostic. */
export class PolicyLoadError extends DiagnosticsError {
  override readonly name = 'PolicyLoadError';
  readonly code = 'POLICY_LOAD';
  constructor(readonly diagnostics: readonly PolicyDiagnostic[]) {
    super(diagnostics);
  }
}

/** Shortens what was found so a message never dumps a whole expression or body. */
export function shown(found: string, max = 60): string {
  const oneLine = found.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

/** Levenshtein distance; small inputs only (element and attribute names). */
function distance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]!;
      prev[j] = Math.min(up + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length]!;
}

/** ` (did you mean "x"?)` when a known name is close enough to be a likely typo, else an empty string. */
export function didYouMean(found: string, known: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const d = distance(found.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const limit = Math.max(2, Math.floor(found.length / 3));
  return best !== undefined && bestDistance <= limit ? ` (did you mean "${best}"?)` : '';
}
