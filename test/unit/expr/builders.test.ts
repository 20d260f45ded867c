import { afterEach, describe, expect, it, vi } from 'vitest';
import { compileExpression, ExpressionError } from '../../../src/expr/index.js';
import { makeContext } from '../../doubles/policy-context.js';

/**
 * Issue 13: string.Join (and other builders) checked the size limit only after building — 500 M characters pushed
 * the engine from 260 to 620 MB and unrelated requests timed out. A builder must raise the limit before it allocates.
 *
 * The proof of "before" is by construction: the primitives that materialise a large string (Array#join,
 * String#repeat/padStart/padEnd, Buffer#toString, encodeURIComponent) and large arrays (Array.from) are observed, and
 * none may produce a result over the limit while the expression runs.
 */
const LIMIT = 10_000;

let largestString = 0;
let largestArray = 0;

function observeString<T extends object>(owner: T, name: keyof T & string): void {
  const original = owner[name] as (...a: unknown[]) => unknown;
  vi.spyOn(owner, name as never).mockImplementation(function (this: unknown, ...a: unknown[]) {
    const out = original.apply(this, a);
    if (typeof out === 'string') largestString = Math.max(largestString, out.length);
    return out;
  } as never);
}

function observeAllocations(): void {
  largestString = 0;
  largestArray = 0;
  observeString(Array.prototype, 'join');
  observeString(String.prototype, 'repeat');
  observeString(String.prototype, 'padStart');
  observeString(String.prototype, 'padEnd');
  observeString(Buffer.prototype, 'toString');
  observeString(globalThis, 'encodeURIComponent');
  const from = Array.from;
  vi.spyOn(Array, 'from').mockImplementation(((...a: Parameters<typeof Array.from>) => {
    const out = from(...a);
    largestArray = Math.max(largestArray, out.length);
    return out;
  }) as typeof Array.from);
}

afterEach(() => {
  vi.restoreAllMocks();
});

function limitError(text: string, kind: 'expression' | 'block', limits: object): ExpressionError {
  const compiled = compileExpression(text, { kind, limits });
  observeAllocations();
  try {
    compiled.evaluate(makeContext());
  } catch (e) {
    expect(e).toBeInstanceOf(ExpressionError);
    return e as ExpressionError;
  } finally {
    vi.restoreAllMocks();
  }
  throw new Error(`expected "${text}" to exceed a limit`);
}

describe('string builders raise the limit before allocating an oversized string', () => {
  it.each([
    ['string.Join(",", Enumerable.Repeat(new string(\'a\', 1000), 100))', 'expression'],
    ["string.Join(\",\", new string('a', 6000), new string('b', 6000))", 'expression'],
    ["string.Concat(Enumerable.Repeat(new string('a', 1000), 100))", 'expression'],
    ["new string('a', 1000000)", 'expression'],
    ['"x".PadLeft(1000000)', 'expression'],
    ['"x".PadRight(1000000, \'-\')', 'expression'],
    ['string.Format("{0,1000000}", 1)', 'expression'],
    ['string.Format("{0}{0}{0}", new string(\'a\', 4000))', 'expression'],
    ['$"{1,1000000}"', 'expression'],
    ["new string('a', 1000).Replace(\"a\", new string('b', 100))", 'expression'],
    [
      "new string('a', 1000).Replace(\"A\", new string('b', 100), StringComparison.OrdinalIgnoreCase)",
      'expression',
    ],
    ["new StringBuilder().Append('x', 1000000).ToString()", 'expression'],
    ['var sb = new StringBuilder(); sb.Length = 1000000; return sb.ToString();', 'block'],
    [
      "new StringBuilder(new string('a', 1000)).Replace(\"a\", new string('b', 100)).ToString()",
      'expression',
    ],
    [
      "var sb = new StringBuilder(); for (var i = 0; i < 100; i++) sb.Append(new string('a', 1000)); return sb.ToString();",
      'block',
    ],
    ["new JArray(Enumerable.Repeat(new string('a', 1000), 100)).ToString()", 'expression'],
    [
      'new XElement("r", Enumerable.Range(0, 100).Select(i => new XElement("c", new string(\'a\', 1000)))).ToString()',
      'expression',
    ],
    ["Regex.Replace(new string('a', 1000), \"a\", new string('b', 100))", 'expression'],
    ["Convert.ToBase64String(Encoding.UTF8.GetBytes(new string('a', 9000)))", 'expression'],
    ["Uri.EscapeDataString(new string(' ', 5000))", 'expression'],
  ])('%s', (text, kind) => {
    const e = limitError(text, kind as 'expression' | 'block', { maxStringLength: LIMIT });
    expect(e.code).toBe('ExpressionLimitExceeded');
    expect(e.reason).toMatch(/^a string of \d+ characters exceeds the limit of 10000$/);
    expect(largestString).toBeLessThanOrEqual(LIMIT);
  });

  it('the reported case: string.Join of 500 M characters fails at the limit without building them', () => {
    // 125 × 4 M characters: the old code joined all 500 M (≈ 500 MB) and only then compared with the 4 M limit.
    const e = limitError(
      'string.Join(",", Enumerable.Repeat(new string(\'a\', 4000000), 125))',
      'expression',
      {},
    );
    expect(e.code).toBe('ExpressionLimitExceeded');
    expect(largestString).toBeLessThanOrEqual(4 * 1024 * 1024);
  });
});

describe('collection builders raise the limit before materialising', () => {
  it('ToCharArray of a long string is a collection over the limit', () => {
    const e = limitError("new string('a', 200000).ToCharArray()", 'expression', {
      maxCollectionSize: 100_000,
    });
    expect(e.code).toBe('ExpressionLimitExceeded');
    expect(largestArray).toBeLessThanOrEqual(100_000);
  });

  it('LINQ over a long string counts steps as it reads the characters', () => {
    const e = limitError("new string('a', 3000000).Count()", 'expression', { maxSteps: 100_000 });
    expect(e.code).toBe('ExpressionLimitExceeded');
    expect(largestArray).toBeLessThanOrEqual(100_000);
  });
});
