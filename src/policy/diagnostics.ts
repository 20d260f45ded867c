/**
 * Load-time problems in policy documents. Every diagnostic names the file, the 1-based line and column in the
 * ORIGINAL text (before named values were substituted), the element path and the rule that was broken, so
 * `portcullis validate` can print `file:line:col: message` and an editor can jump there.
 */
export interface PolicyDiagnostic {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** Element path such as `policies/inbound/choose[1]/when[2]`; empty when the problem is not inside an element. */
  readonly path: string;
  /** Stable machine-readable code, e.g. `unknown-element`. */
  readonly code: DiagnosticCode;
  /** The rule and what was found, already redacted of secret named values. */
  readonly message: string;
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

/** Formats one diagnostic the way `portcullis validate` prints it. */
export function formatDiagnostic(d: PolicyDiagnostic): string {
  const where = d.path === '' ? '' : `${d.path}: `;
  return `${d.file}:${d.line}:${d.column}: ${where}${d.message}`;
}

/** Thrown when a document (or a pipeline built from documents) has at least one diagnostic. */
export class PolicyLoadError extends Error {
  override readonly name = 'PolicyLoadError';
  readonly code = 'POLICY_LOAD';
  constructor(readonly diagnostics: readonly PolicyDiagnostic[]) {
    super(diagnostics.map(formatDiagnostic).join('\n'));
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
