/**
 * Value compilation: one attribute value or text of a policy element, classified (literal or policy expression),
 * checked against its declaration and compiled — an expression once, at load time; a literal parsed to its type.
 */
import { compileExpression, ExpressionError } from '../expr/index.js';
import { type PolicyDiagnostic, shown } from './diagnostics.js';
import type { ValueSource } from './node.js';
import { findExpressionEnd, ScanError } from './scanner.js';
import type { AttributeSpec } from './schema.js';
import type { PolicySource } from './source.js';

/** The document a value is read from, and where what is found about it goes (the document compiler). */
export interface ValueContext {
  /** Shown in every diagnostic. */
  readonly file: string;
  readonly source: PolicySource;
  /** A problem at `offset` of the document, with the element path and a message the compiler redacts. */
  report(offset: number, path: string, code: PolicyDiagnostic['code'], message: string): void;
  /** A problem with a position of its own (an expression's error points inside the expression). */
  diagnose(diagnostic: PolicyDiagnostic): void;
  /** What an expression reads (`Request.Body…`, `*`): the statement needs those delivered. */
  noteReferences(references: ReadonlySet<string>): void;
}

/** An attribute or text that is a policy expression (`@(…)`, `@{…}`): its value is known only per request. */
export function isExpression(text: string): boolean {
  const t = text.trimStart();
  return t.startsWith('@(') || t.startsWith('@{');
}

/** Classifies, checks and (for an expression) compiles one attribute value or text. */
export function compileValue(
  at: ValueContext,
  raw: string,
  offset: number,
  spec: AttributeSpec,
  what: string,
  path: string,
): ValueSource | undefined {
  const trimmed = raw.trim();
  if (isExpression(trimmed)) {
    if (!spec.expression) {
      at.report(
        offset,
        path,
        'attribute',
        `${what} does not allow policy expressions, got "${shown(trimmed)}"`,
      );
      return undefined;
    }
    let end: number;
    try {
      end = findExpressionEnd(trimmed, 0, false);
    } catch (err) {
      if (err instanceof ScanError) {
        at.report(offset, path, 'expression', `${what}: ${err.message}, got "${shown(trimmed)}"`);
        return undefined;
      }
      throw err;
    }
    if (end !== trimmed.length) {
      at.report(
        offset,
        path,
        'expression',
        `${what}: an expression must be the whole value, got "${shown(trimmed.slice(end))}" after it`,
      );
      return undefined;
    }
    const lead = raw.length - raw.trimStart().length;
    const origin = { file: at.file, ...at.source.position(offset + lead + 2) };
    try {
      const expression = compileExpression(trimmed.slice(2, -1), {
        kind: trimmed[1] === '(' ? 'expression' : 'block',
        origin,
      });
      at.noteReferences(expression.references);
      return { kind: 'expression', expression, text: trimmed };
    } catch (err) {
      if (err instanceof ExpressionError) {
        at.diagnose({
          file: at.file,
          line: err.line ?? origin.line,
          column: err.column ?? origin.column,
          path,
          code: 'expression',
          message: at.source.redact(`${what}: ${err.reason}`),
        });
        return undefined;
      }
      throw err;
    }
  }
  const bad = (rule: string): undefined => {
    at.report(offset, path, 'attribute', `${what} ${rule}, got "${shown(raw)}"`);
    return undefined;
  };
  switch (spec.kind) {
    case 'string':
      return { kind: 'literal', value: raw, text: raw };
    case 'int': {
      if (!/^[-+]?\d+$/.test(trimmed)) return bad('must be an integer');
      const n = Number.parseInt(trimmed, 10);
      if (spec.min !== undefined && n < spec.min) return bad(`must be at least ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) return bad(`must be at most ${spec.max}`);
      return { kind: 'literal', value: n, text: trimmed };
    }
    case 'number': {
      const n = Number(trimmed);
      if (trimmed === '' || !Number.isFinite(n)) return bad('must be a number');
      if (spec.min !== undefined && n < spec.min) return bad(`must be at least ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) return bad(`must be at most ${spec.max}`);
      return { kind: 'literal', value: n, text: trimmed };
    }
    case 'bool': {
      // .NET's bool.Parse is case-insensitive.
      const t = trimmed.toLowerCase();
      if (t !== 'true' && t !== 'false') return bad('must be true or false');
      return { kind: 'literal', value: t === 'true', text: trimmed };
    }
    case 'enum': {
      const values = spec.values ?? [];
      if (!values.includes(trimmed)) return bad(`must be one of ${values.join(', ')}`);
      return { kind: 'literal', value: trimmed, text: trimmed };
    }
  }
}
