import { type Diagnostic, DiagnosticsError, didYouMean, formatDiagnostic } from '../diagnostic.js';

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

export { didYouMean, formatDiagnostic };

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
