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
