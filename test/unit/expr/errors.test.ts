import { describe, expect, it } from 'vitest';
import { compileExpression, ExpressionError } from '../../../src/expr/index.js';
import { makeContext } from '../../doubles/policy-context.js';

function caught(f: () => unknown): ExpressionError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ExpressionError);
    return e as ExpressionError;
  }
  throw new Error('expected an ExpressionError');
}

const origin = { file: 'policies/courses.xml', line: 14, column: 30 };

describe('error positions and messages', () => {
  it('syntax errors name file:line:col of the offending token with a caret', () => {
    const e = caught(() =>
      compileExpression('context.Request.Headers.GetValueOrDefault("a",)', { kind: 'expression', origin }),
    );
    expect(e.code).toBe('ExpressionSyntaxError');
    expect(e.file).toBe('policies/courses.xml');
    expect(e.line).toBe(14);
    expect(e.column).toBe(30 + 46);
    expect(e.message).toBe(
      "policies/courses.xml:14:76: expected an expression but found ')'\n" +
        '  context.Request.Headers.GetValueOrDefault("a",)\n' +
        `  ${' '.repeat(46)}^`,
    );
  });

  it('positions on later lines of a block count from column 1', () => {
    const e = caught(() => compileExpression('var x = 1;\n  return y;', { kind: 'block', origin }));
    expect([e.line, e.column]).toEqual([15, 10]);
    expect(e.reason).toBe("the name 'y' does not exist in the current context");
  });

  it('evaluation failures carry the .NET exception type and the failing node', () => {
    const e = caught(() =>
      compileExpression('(string)context.Variables["missing"]', { kind: 'expression', origin }).evaluate(
        makeContext(),
      ),
    );
    expect(e.code).toBe('ExpressionValueEvaluationFailure');
    expect(e.exceptionType).toBe('KeyNotFoundException');
    expect(e.reason).toBe("KeyNotFoundException: The given key 'missing' was not present in the dictionary.");
    expect(e.column).toBe(30 + 25);
  });

  it('null dereference names what was null', () => {
    const e = caught(() =>
      compileExpression('context.User.Id', { kind: 'expression' }).evaluate(makeContext()),
    );
    expect(e.reason).toContain('NullReferenceException');
    expect(e.reason).toContain("'.Id'");
  });

  it.each([
    ['"unterminated', 'unterminated string literal'],
    ["'ab'", 'a char literal holds exactly one character'],
    ['"\\q"', "unrecognized escape sequence '\\q'"],
    ['1 +', 'expected an expression but found end of expression'],
    ['(1', "expected ')' but found end of expression"],
    ['1 2', "unexpected '2' after the end of the expression"],
    ['$"{}"', 'empty interpolation hole'],
    ['$"}"', "a '}' in an interpolated string must be doubled"],
    ['new Foo()', "the type 'Foo' is not available in policy expressions"],
    ['String.Nope("x")', "'Nope' is not a static method of 'String'"],
    ['"x".Nope()', "'Nope' is not a member available to policy expressions"],
    ['context.Nope', "'Nope' is not a member of context"],
    [
      'context.Request.Headrs.GetValueOrDefault("a", "")',
      `'Headrs' is not a member available to policy expressions (did you mean "Headers"?)`,
    ],
    ['context.Reqest.Method', `'Reqest' is not a member of context (did you mean "Request"?)`],
    [
      'String.Concatt("a", "b")',
      `'Concatt' is not a static method of 'String' available to policy expressions (did you mean "Concat"?)`,
    ],
    ['System.Nope.X', "does not exist in 'System'"],
    ['unknownName', "the name 'unknownName' does not exist in the current context"],
    ['12abc', "invalid numeric literal '12a'"],
    ['1 = 2', 'the left-hand side of an assignment must be a variable'],
    ['', 'empty expression'],
    ['typeof(string)', 'typeof is not supported'],
    ['JObject', "'JObject' is a type, not a value"],
  ])('%s → %s', (text, message) => {
    const e = caught(() => compileExpression(text, { kind: 'expression' }));
    expect(e.code).toBe('ExpressionSyntaxError');
    expect(e.reason).toContain(message);
  });
});
