import { describe, expect, it } from 'vitest';
import { failure, show } from '../../doubles/policy-context.js';

const nums = 'new[] { 5, 3, 8, 1, 3 }';

describe('LINQ', () => {
  it.each([
    [`string.Join(",", ${nums}.Where(x => x > 2))`, '5,3,8,3'],
    [`string.Join(",", ${nums}.Select(x => x * 10))`, '50,30,80,10,30'],
    [`string.Join(",", ${nums}.Select((x, i) => i))`, '0,1,2,3,4'],
    [`${nums}.Any()`, 'True'],
    [`${nums}.Any(x => x > 7)`, 'True'],
    [`${nums}.All(x => x > 0)`, 'True'],
    [`${nums}.Count()`, '5'],
    [`${nums}.Count(x => x == 3)`, '2'],
    [`${nums}.First()`, '5'],
    [`${nums}.First(x => x < 5)`, '3'],
    [`${nums}.FirstOrDefault(x => x > 100)`, '0'],
    [`new string[0].FirstOrDefault() ?? "none"`, 'none'],
    [`${nums}.Last()`, '3'],
    [`${nums}.LastOrDefault(x => x > 4)`, '8'],
    [`${nums}.Sum()`, '20'],
    [`${nums}.Sum(x => x * 2)`, '40'],
    [`${nums}.Min()`, '1'],
    [`${nums}.Max()`, '8'],
    [`${nums}.Average()`, '4'],
    [`new[] { 1, 2 }.Average()`, '1.5'],
    [`new[] { 1.5, 2.5 }.Sum()`, '4'],
    [`string.Join(",", ${nums}.OrderBy(x => x))`, '1,3,3,5,8'],
    [`string.Join(",", ${nums}.OrderByDescending(x => x))`, '8,5,3,3,1'],
    [`string.Join(",", new[] { "b", "a", "C" }.OrderBy(x => x))`, 'a,b,C'],
    [`string.Join(",", new[] { "b", "a", "C" }.OrderBy(x => x, StringComparer.Ordinal))`, 'C,a,b'],
    [
      `string.Join(",", new[] { "bb", "a", "cc", "d" }.OrderBy(x => x.Length).ThenByDescending(x => x))`,
      'd,a,cc,bb',
    ],
    [`string.Join(",", ${nums}.Distinct())`, '5,3,8,1'],
    [`string.Join(",", new[] { "a", "A", "b" }.Distinct(StringComparer.OrdinalIgnoreCase))`, 'a,b'],
    [`string.Join(",", ${nums}.Skip(3))`, '1,3'],
    [`string.Join(",", ${nums}.Take(2))`, '5,3'],
    [`string.Join(",", ${nums}.Reverse())`, '3,1,8,3,5'],
    [`string.Join(",", ${nums}.Concat(new[] { 9 }))`, '5,3,8,1,3,9'],
    [`${nums}.Contains(8)`, 'True'],
    [`new[] { "A" }.Contains("a", StringComparer.OrdinalIgnoreCase)`, 'True'],
    [`${nums}.ToList().Count`, '5'],
    [`${nums}.ToArray().Length`, '5'],
    [`${nums}.ElementAt(2)`, '8'],
    [`string.Join(",", new[] { new[] { 1, 2 }, new[] { 3 } }.SelectMany(x => x))`, '1,2,3'],
    [
      `string.Join(";", new[] { "apple", "avocado", "banana" }.GroupBy(x => x[0]).Select(g => g.Key + "=" + g.Count()))`,
      'a=2;b=1',
    ],
    [`new[] { "a", "b" }.ToDictionary(x => x, x => x.ToUpper())["b"]`, 'B'],
    [`${nums}.Aggregate((a, b) => a * b)`, '360'],
    [`new[] { "x", "y" }.Aggregate("", (acc, s) => acc + s)`, 'xy'],
    [`string.Join(",", Enumerable.Range(1, 4))`, '1,2,3,4'],
    [`string.Join(",", Enumerable.Repeat("z", 2))`, 'z,z'],
    [`Enumerable.Empty<int>().Any()`, 'False'],
    [`string.Join(",", new[] { 1, 2, 3 }.Zip(new[] { "a", "b" }, (n, s) => s + n))`, 'a1,b2'],
    [`new[] { 1, 2 }.SequenceEqual(new[] { 1, 2 })`, 'True'],
    [`string.Join(",", new[] { 1, 2, 3 }.Except(new[] { 2 }))`, '1,3'],
    [`string.Join(",", new[] { 1, 2, 3 }.Intersect(new[] { 3, 2, 9 }))`, '2,3'],
    [`string.Join(",", new[] { 1, 2 }.Union(new[] { 2, 3 }))`, '1,2,3'],
    [`string.Join(",", new object[] { 1, "a", 2 }.OfType<int>())`, '1,2'],
    [`string.Join(",", ${nums}.TakeWhile(x => x > 2))`, '5,3,8'],
    [`string.Join(",", ${nums}.SkipWhile(x => x > 2))`, '1,3'],
    [`new List<string> { "q" }.Exists(s => s == "q")`, 'True'],
    [`new List<int> { 3, 1, 2 }.Find(x => x < 3)`, '1'],
    [`string.Join(",", new List<int> { 3, 1, 2 }.FindAll(x => x > 1))`, '3,2'],
    [`Enumerable.Where(${nums}, x => x == 8).Single()`, '8'],
    [`new[] { 2147483647, 1 }.Sum()`, 'error'],
  ])('%s → %s', (expr, expected) => {
    if (expected === 'error') {
      expect(failure(expr)).toContain('OverflowException');
      return;
    }
    expect(show(expr)).toBe(expected);
  });

  it.each([
    ['new int[0].First()', 'Sequence contains no elements'],
    ['new[] { 1 }.First(x => x > 1)', 'Sequence contains no matching element'],
    ['new[] { 1, 2 }.Single()', 'Sequence contains more than one element'],
    ['new int[0].Max()', 'Sequence contains no elements'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});
