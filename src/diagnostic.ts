/**
 * One problem found while loading something a user wrote: a gateway configuration, a policy document, an API
 * definition being imported. Every module that reports load-time problems uses this one type and this one formatter
 * (it imports nothing), so `portcullis validate`, `up`, the management API and the importers all print
 * `file:line:col: path: message` and an editor can jump there.
 */
export interface Diagnostic<Code extends string = string> {
  readonly file: string;
  /** 1-based. Absent only when the position is not known (then `path` says where). */
  readonly line?: number;
  readonly column?: number;
  /**
   * Where inside the file, in the file's own terms: a key path (`apis[0].serviceUrl`), an element path
   * (`policies/inbound/choose[1]`), a JSON pointer. Empty or absent when the problem is about the file as a whole.
   */
  readonly path?: string;
  /** Stable machine-readable code (e.g. `unknown-element`), for the reporters that have one. */
  readonly code?: Code;
  /** The rule and what was found, already redacted of secrets. */
  readonly message: string;
}

/** `file:line:col: path: message`; the position and the path are left out when not known. */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const position = diagnostic.line === undefined ? '' : `:${diagnostic.line}:${diagnostic.column ?? 1}`;
  const where = diagnostic.path ? `${diagnostic.path}: ` : '';
  return `${diagnostic.file}${position}: ${where}${diagnostic.message}`;
}

/** The base of every error that carries diagnostics: its message is their formatted lines. */
export class DiagnosticsError extends Error {
  constructor(readonly problems: readonly Diagnostic[]) {
    super(problems.map(formatDiagnostic).join('\n'));
  }
}

/** Levenshtein distance; small inputs only (element, attribute and member names). */
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
