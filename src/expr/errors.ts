import type { SourceOrigin } from './origin.js';

export type ExpressionErrorCode =
  | 'ExpressionSyntaxError'
  | 'ExpressionValueEvaluationFailure'
  | 'ExpressionLimitExceeded';

/**
 * The one error type that leaves `src/expr`. `code` is stable (the pipeline maps ExpressionValueEvaluationFailure and
 * ExpressionLimitExceeded to `context.LastError.Reason`); `message` is
 * `file:line:col: <what>` followed by the source line and a caret, `reason` is the bare text without position.
 */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
  readonly code: ExpressionErrorCode;
  /** The bare message without position or excerpt, suitable for `context.LastError.Message`. */
  readonly reason: string;
  /** The .NET exception type for evaluation failures (`NullReferenceException`, `KeyNotFoundException`, …). */
  readonly exceptionType: string | undefined;
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(
    code: ExpressionErrorCode,
    reason: string,
    where: { file?: string; line?: number; column?: number; excerpt?: string; exceptionType?: string } = {},
  ) {
    const prefix =
      where.line !== undefined ? `${where.file ?? '<expression>'}:${where.line}:${where.column ?? 1}: ` : '';
    super(prefix + reason + (where.excerpt ? `\n${where.excerpt}` : ''));
    this.code = code;
    this.reason = reason;
    this.exceptionType = where.exceptionType;
    this.file = where.file;
    this.line = where.line;
    this.column = where.column;
  }
}

/** Where an offset inside the expression text lies in the policy file, plus a two-line caret excerpt. */
export function locate(
  text: string,
  offset: number,
  origin: SourceOrigin | undefined,
): { file: string; line: number; column: number; excerpt: string } {
  const clamped = Math.max(0, Math.min(offset, text.length));
  let line = 0;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  let lineEnd = text.indexOf('\n', lineStart);
  if (lineEnd < 0) lineEnd = text.length;
  const col = clamped - lineStart;
  const baseLine = origin?.line ?? 1;
  const baseColumn = origin?.column ?? 1;
  const sourceLine = text.slice(lineStart, lineEnd).replace(/\t/g, ' ').replace(/\r$/, '');
  // Keep excerpts short: a 200-character window around the caret is enough to see what was found.
  const from = Math.max(0, col - 100);
  const shown = sourceLine.slice(from, from + 200);
  const excerpt = `  ${shown}\n  ${' '.repeat(col - from)}^`;
  return {
    file: origin?.file ?? '<expression>',
    line: baseLine + line,
    column: line === 0 ? baseColumn + col : col + 1,
    excerpt,
  };
}
