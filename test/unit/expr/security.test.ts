import { describe, expect, it } from 'vitest';
import {
  compileExpression,
  DEFAULT_LIMITS,
  ExpressionError,
  toDotNetString,
} from '../../../src/expr/index.js';
import { makeContext } from '../../doubles/policy-context.js';

function error(text: string, kind: 'expression' | 'block' = 'expression', limits = {}): ExpressionError {
  try {
    compileExpression(text, { kind, limits }).evaluate(makeContext());
  } catch (e) {
    expect(e).toBeInstanceOf(ExpressionError);
    return e as ExpressionError;
  }
  throw new Error(`expected "${text}" to fail`);
}

describe('sandbox escapes from JavaScript expression evaluators are unreachable', () => {
  it.each([
    // constructor chains (the classic `constructor.constructor("return process")()`)
    '"".constructor',
    '"".constructor.constructor("return process")()',
    'context.constructor',
    'context.Request.constructor.constructor',
    'new[] { 1 }.constructor',
    '(1).constructor',
    // __proto__ / prototype pollution
    '"".__proto__',
    'context.__proto__',
    'context.Variables.__proto__',
    'JObject.prototype',
    'String.prototype',
    // toString / valueOf tricks
    '"".toString()',
    'context.valueOf()',
    '"a".toUpperCase()',
    'context.Request.Headers.get("x")',
    // getter abuse / JS internals of our model
    'context.request',
    'context.Request.headers',
    'context.Request.Body.bytes',
    'context.Request.Body.read(true)',
    'context.onTrace',
    'context.now()',
    'context.Variables.set("x", 1)',
    // prototype via JS-only helpers
    'Object.keys(context)',
    'globalThis',
    'process.exit(1)',
    'require("fs")',
    'eval("1")',
    'Function("return this")()',
    'this',
  ])('%s is rejected', (text) => {
    const e = error(text);
    expect(['ExpressionSyntaxError', 'ExpressionValueEvaluationFailure']).toContain(e.code);
  });

  it('names the member it refuses', () => {
    expect(error('"".constructor').message).toContain(
      "'constructor' is not a member available to policy expressions",
    );
    expect(error('context.__proto__').message).toContain("'__proto__' is not a member of context");
  });

  it('prototype names through indexers are plain dictionary keys, never JS properties', () => {
    const ctx = makeContext();
    for (const key of ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty']) {
      expect(() =>
        compileExpression(`context.Variables["${key}"]`, { kind: 'expression' }).evaluate(ctx),
      ).toThrow(/KeyNotFoundException/);
      expect(
        compileExpression(`context.Request.Headers.GetValueOrDefault("${key}", "none")`, {
          kind: 'expression',
        }).evaluate(ctx),
      ).toBe('none');
      expect(
        compileExpression(`JObject.Parse("{}")["${key}"] == null`, { kind: 'expression' }).evaluate(ctx),
      ).toBe(true);
    }
    const d = compileExpression(
      'var d = new Dictionary<string, string>(); d["__proto__"] = "x"; return d["__proto__"] + d.Count;',
      { kind: 'block' },
    );
    expect(d.evaluate(ctx)).toBe('x1');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('JSON with __proto__ keys does not pollute prototypes', () => {
    const v = compileExpression(
      'JObject.Parse("{\\"__proto__\\": {\\"polluted\\": 1}}")["__proto__"]["polluted"]',
      { kind: 'expression' },
    ).evaluate(makeContext());
    expect(toDotNetString(v)).toBe('1');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('anonymous type members named like JS internals stay local', () => {
    const v = compileExpression('new { constructor = 1 }.constructor', { kind: 'expression' }).evaluate(
      makeContext(),
    );
    expect(v).toBe(1);
  });
});

describe('limits', () => {
  it('defaults are frozen', () => {
    expect(Object.isFrozen(DEFAULT_LIMITS)).toBe(true);
    expect(() => compileExpression('1', { kind: 'expression', limits: { bogus: 1 } as never })).toThrow(
      TypeError,
    );
  });

  it('source size', () => {
    const e = (() => {
      try {
        compileExpression(`"${'a'.repeat(100)}"`, { kind: 'expression', limits: { maxSourceLength: 50 } });
      } catch (x) {
        return x as ExpressionError;
      }
      throw new Error('no error');
    })();
    expect(e.code).toBe('ExpressionLimitExceeded');
  });

  it('AST depth', () => {
    const deep = `${'('.repeat(500)}1${')'.repeat(500)}`;
    expect(() => compileExpression(deep, { kind: 'expression' })).toThrow(/nesting exceeds the limit of 128/);
    const unary = `${'!'.repeat(400)}true`;
    expect(() => compileExpression(unary, { kind: 'expression' })).toThrow(ExpressionError);
  });

  // Found by the fuzzing harness (test/fuzz): shapes the parser builds in a loop, but that nest the tree as deeply
  // as parentheses would — each overflowed the stack (a RangeError, not an ExpressionError) before they counted.
  it.each([
    ['a left-associative chain', `${'"a"+'.repeat(5000)}"a"`],
    ['prefix decrements', `${'--'.repeat(5000)}x`],
    ['prefix minus signs', `${'- '.repeat(5000)}1`],
    ['member accesses', `context${'.Request'.repeat(5000)}`],
    ['calls and indexers', `x${'()[0]'.repeat(3000)}`],
  ])('AST depth counts %s', (_shape, text) => {
    expect(() => compileExpression(text, { kind: 'expression' })).toThrow(/nesting exceeds the limit of 128/);
  });

  it('a chain within the depth limit still runs', () => {
    expect(
      toDotNetString(
        compileExpression(`${'"a"+'.repeat(100)}"a"`, { kind: 'expression' }).evaluate(makeContext()),
      ),
    ).toBe('a'.repeat(101));
  });

  it('a hexadecimal literal needs digits (found by fuzzing: "0x" was a SyntaxError from BigInt)', () => {
    for (const text of ['0x', '0x_', '0x1_'])
      expect(() => compileExpression(text, { kind: 'expression' })).toThrow(/invalid hexadecimal literal/);
    expect(compileExpression('0xFF', { kind: 'expression' }).evaluate(makeContext())).toBe(255);
  });

  it('infinite loops hit the step limit', () => {
    for (const loop of [
      'while (true) { } ',
      'for (;;) { }',
      'do { } while (true);',
      'var i = 0; while (i >= 0) { i = 0; }',
    ]) {
      const e = error(`${loop} return 1;`, 'block');
      expect(e.code).toBe('ExpressionLimitExceeded');
      expect(e.message).toContain('steps');
    }
  });

  it('unbounded recursion hits the call-depth limit', () => {
    const e = error('int F(int n) { return F(n + 1); } return F(0);', 'block');
    expect(e.code).toBe('ExpressionLimitExceeded');
  });

  it('huge LINQ work counts steps', () => {
    const e = error('Enumerable.Range(0, 90000).Select(x => x).Where(x => x > 0).Count()', 'expression', {
      maxSteps: 1000,
    });
    expect(e.code).toBe('ExpressionLimitExceeded');
  });

  it('string growth is bounded', () => {
    expect(error('var s = "ab"; while (true) { s = s + s; } return s;', 'block').code).toBe(
      'ExpressionLimitExceeded',
    );
    expect(error("new string('x', 100000000)").code).toBe('ExpressionLimitExceeded');
    expect(error('"x".PadLeft(100000000)').code).toBe('ExpressionLimitExceeded');
    expect(
      error(
        'var sb = new StringBuilder("x"); for (var i = 0; i < 40; i++) sb.Append(sb.ToString()); return sb.ToString();',
        'block',
      ).code,
    ).toBe('ExpressionLimitExceeded');
    expect(
      error('"a".Replace("a", new string(\'b\', 3000))', 'expression', { maxStringLength: 1000 }).code,
    ).toBe('ExpressionLimitExceeded');
  });

  it('collection growth is bounded', () => {
    expect(error('new int[200000]').code).toBe('ExpressionLimitExceeded');
    expect(
      error('var l = new List<int>(); while (true) l.Add(1); return 1;', 'block', { maxSteps: 10_000_000 })
        .code,
    ).toBe('ExpressionLimitExceeded');
    expect(error('Enumerable.Repeat(1, 1000000).Count()').code).toBe('ExpressionLimitExceeded');
    expect(
      error('var a = new JArray(); while (true) a.Add(1); return 1;', 'block', { maxSteps: 10_000_000 }).code,
    ).toBe('ExpressionLimitExceeded');
  });

  it('regexes run on a linear-time engine (see regex.test.ts) and their input is bounded', () => {
    expect(
      error('Regex.IsMatch(new string(\'a\', 2000), "a+")', 'expression', { maxRegexInputLength: 1000 }).code,
    ).toBe('ExpressionValueEvaluationFailure');
  });

  it('a catch block cannot swallow a limit', () => {
    const e = error(
      'try { while (true) { } } catch (Exception) { return "swallowed"; } return "x";',
      'block',
    );
    expect(e.code).toBe('ExpressionLimitExceeded');
  });
});
