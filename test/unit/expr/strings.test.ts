import { describe, expect, it } from 'vitest';
import { failure, show } from '../../doubles/policy-context.js';

describe('System.String', () => {
  it.each([
    ['"Hello".Length', '5'],
    ['"Hello"[1]', 'e'],
    ['"Hello".Substring(1)', 'ello'],
    ['"Hello".Substring(1, 3)', 'ell'],
    ['"Hello".IndexOf("l")', '2'],
    ['"Hello".IndexOf(\'l\', 3)', '3'],
    ['"Hello".LastIndexOf("l")', '3'],
    ['"Hello".IndexOf("L")', '-1'],
    ['"Hello".IndexOf("L", StringComparison.OrdinalIgnoreCase)', '2'],
    ['"Hello".Contains("ell")', 'True'],
    ['"Hello".Contains("ELL")', 'False'],
    ['"Hello".Contains("ELL", StringComparison.OrdinalIgnoreCase)', 'True'],
    ['"Hello".StartsWith("He")', 'True'],
    ['"Hello".StartsWith("he", StringComparison.OrdinalIgnoreCase)', 'True'],
    ['"Hello".EndsWith("LO", StringComparison.InvariantCultureIgnoreCase)', 'True'],
    ['"Hello".EndsWith("x")', 'False'],
    ['"a-b-c".Replace("-", "+")', 'a+b+c'],
    ["\"a-b-c\".Replace('-', '_')", 'a_b_c'],
    ['"aXbxc".Replace("x", "-", StringComparison.OrdinalIgnoreCase)', 'a-b-c'],
    ['"  pad  ".Trim()', 'pad'],
    ['"  pad  ".TrimStart()', 'pad  '],
    ['"  pad  ".TrimEnd()', '  pad'],
    ['"xxpadxx".Trim(\'x\')', 'pad'],
    ['"/path/".Trim(\'/\')', 'path'],
    ['"/path/".TrimEnd(\'/\')', '/path'],
    ['"MiXeD".ToUpper()', 'MIXED'],
    ['"MiXeD".ToLower()', 'mixed'],
    ['"MiXeD".ToLowerInvariant()', 'mixed'],
    ['"7".PadLeft(3, \'0\')', '007'],
    ['"7".PadRight(3)', '7  '],
    ['"abc".Insert(1, "XY")', 'aXYbc'],
    ['"abcdef".Remove(2)', 'ab'],
    ['"abcdef".Remove(1, 2)', 'adef'],
    ['string.Join("|", "a,b,,c".Split(\',\'))', 'a|b||c'],
    ['"a,b,,c".Split(\',\').Length', '4'],
    ['string.Join("|", "a,b,,c".Split(new[] { \',\' }, StringSplitOptions.RemoveEmptyEntries))', 'a|b|c'],
    ['string.Join("|", "a, b ,c".Split(\',\', StringSplitOptions.TrimEntries))', 'a|b|c'],
    ['string.Join("|", "a::b::c".Split(new[] { "::" }, StringSplitOptions.None))', 'a|b|c'],
    ['string.Join("|", "a::b::c".Split("::"))', 'a|b|c'],
    ['string.Join("|", "a;b,c".Split(\';\', \',\'))', 'a|b|c'],
    ['string.Join("|", "a,b,c".Split(new[] { \',\' }, 2))', 'a|b,c'],
    ['string.Join("|", "a b  c".Split())', 'a|b||c'],
    ['"Bearer abc".Split(\' \')[1]', 'abc'],
    ['string.IsNullOrEmpty("")', 'True'],
    ['string.IsNullOrEmpty(null)', 'True'],
    ['string.IsNullOrEmpty(" ")', 'False'],
    ['string.IsNullOrWhiteSpace(" \\t")', 'True'],
    ['String.IsNullOrEmpty("x")', 'False'],
    ['string.Empty.Length', '0'],
    ['string.Format("{0}-{1}", "a", 2)', 'a-2'],
    ['string.Format("{0:D4}|{1,6:F1}|{2,-4}|", 42, 3.14159, "x")', '0042|   3.1|x   |'],
    ['string.Format("{{{0}}}", 1)', '{1}'],
    ['String.Format("{0} {0}", "r")', 'r r'],
    ['string.Format("{0:yyyy}", new DateTime(2020, 5, 6))', '2020'],
    ['string.Format("{0:#,##0.00}", 1234.5)', '1,234.50'],
    ['string.Format("{0:0.##}", 2.5)', '2.5'],
    ['string.Format("{0:0.##}", 2.0)', '2'],
    ['string.Format("{0:00.0}", 3.14159)', '03.1'],
    ['string.Join(",", new[] { 1, 2, 3 })', '1,2,3'],
    ['string.Join(", ", new List<string> { "a", "b" })', 'a, b'],
    ['string.Concat("a", "b", "c")', 'abc'],
    ['string.Concat(new[] { "x", "y" })', 'xy'],
    ['string.Compare("a", "b")', '-1'],
    ['string.Compare("a", "A", StringComparison.OrdinalIgnoreCase)', '0'],
    ['string.CompareOrdinal("B", "a") < 0', 'True'],
    ['string.Compare("B", "a") > 0', 'True'],
    ['string.Equals("a", "A", StringComparison.OrdinalIgnoreCase)', 'True'],
    ['"abc".Equals("abc")', 'True'],
    ['"abc".Equals("ABC", StringComparison.OrdinalIgnoreCase)', 'True'],
    ['"abc".CompareTo("abd")', '-1'],
    ["new string('-', 3)", '---'],
    ["new string(new[] { 'a', 'b' })", 'ab'],
    ['"abc".ToCharArray().Length', '3'],
    ['"hello".ToCharArray()[0]', 'h'],
    ["char.IsDigit('7')", 'True'],
    ["char.IsLetter('7')", 'False'],
    ['char.IsUpper("aB"[1])', 'True'],
    ["char.ToUpper('q')", 'Q'],
    ['"abc".Any(c => c == \'b\')', 'True'],
    ['"a1b2".Count(char.IsDigit)', 'error'],
    ['"a1b2".Where(c => char.IsDigit(c)).Count()', '2'],
    ['new string("hello".Reverse().ToArray())', 'olleh'],
    ['"x".GetHashCode() == "x".GetHashCode()', 'True'],
  ])('%s → %s', (expr, expected) => {
    if (expected === 'error') {
      expect(failure(expr)).not.toBe('no error');
      return;
    }
    expect(show(expr)).toBe(expected);
  });

  it.each([
    ['"abc".Substring(5)', 'ArgumentOutOfRangeException'],
    ['"abc".Substring(1, 5)', 'ArgumentOutOfRangeException'],
    ['"abc"[3]', 'IndexOutOfRangeException'],
    ['((string)null).Length', 'NullReferenceException'],
    ['"abc".Replace("", "x")', 'ArgumentException'],
    ['string.Format("{1}", "a")', 'FormatException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });

  it('StringBuilder builds strings', () => {
    expect(
      show(
        'new StringBuilder("a").Append(1).Append(\'-\').AppendFormat("{0:D2}", 7).AppendLine().Append(true).ToString()',
      ),
    ).toBe('a1-07\nTrue');
    expect(show('new System.Text.StringBuilder().Append("xyz").Length')).toBe('3');
  });
});
