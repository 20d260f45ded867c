import { describe, expect, it } from 'vitest';
import { CsChar, CsDecimal, CsDouble } from '../../../src/expr/index.js';
import { evaluate, show } from '../../doubles/policy-context.js';

describe('literals', () => {
  it.each([
    ['"abc"', 'abc'],
    ['"a\\tb\\n"', 'a\tb\n'],
    ['"\\u0041\\x42"', 'AB'],
    ['"quote \\" inside"', 'quote " inside'],
    ['@"C:\\path\\file"', 'C:\\path\\file'],
    ['@"say ""hi"""', 'say "hi"'],
    ['@"multi\nline"', 'multi\nline'],
    ["'x'", 'x'],
    ["'\\''", "'"],
    ['$"{1}+{2}={1 + 2}"', '1+2=3'],
    ['$"{{literal}} {"x"}"', '{literal} x'],
    ['$"[{42,5}]"', '[   42]'],
    ['$"[{42,-5}]"', '[42   ]'],
    ['$"{3.14159:F2}"', '3.14'],
    ['$"{255:X4}"', '00FF'],
    ['$"{1234567:N0}"', '1,234,567'],
    ['$"{0.256:P1}"', '25.6 %'],
    ['$"{7:D3}"', '007'],
    ['$@"path\\{1}"', 'path\\1'],
    ['@$"a""b{2}"', 'a"b2'],
    ['$"{(true ? "y" : "n")}"', 'y'],
    ['$"{new DateTime(2024, 1, 2):yyyy-MM-dd}"', '2024-01-02'],
    ['$"nested {$"inner {1}"}"', 'nested inner 1'],
    ['42', '42'],
    ['0x1F', '31'],
    ['1_000_000', '1000000'],
    ['42L', '42'],
    ['3000000000', '3000000000'],
    ['1.5', '1.5'],
    ['2.0', '2'],
    ['1e3', '1000'],
    ['1.5f', '1.5'],
    ['2d', '2'],
    ['1.50m', '1.50'],
    ['true', 'True'],
    ['false', 'False'],
    ['null ?? "was null"', 'was null'],
    ['-2147483648', '-2147483648'],
    ['-9223372036854775808', '-9223372036854775808'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('keeps .NET numeric types apart', () => {
    expect(evaluate('5')).toBe(5);
    expect(evaluate('5L')).toBe(5n);
    expect(evaluate('5.0')).toBeInstanceOf(CsDouble);
    expect(evaluate('5m')).toBeInstanceOf(CsDecimal);
    expect(evaluate("'a'")).toBeInstanceOf(CsChar);
    expect(evaluate('2147483648')).toBe(2147483648n);
  });
});
