/**
 * IEnumerator<T> from GetEnumerator(), and the static System.Nullable. Expected values from the .NET API reference:
 * IEnumerator<T>.MoveNext ("true if the enumerator was successfully advanced to the next element; false if the
 * enumerator has passed the end"), Current before MoveNext / after the end (an array's enumerator throws
 * InvalidOperationException), Reset (back before the first element); Nullable.Compare ("less than zero: n1 is null and
 * n2 is not, or n1 is less than n2"), Nullable.Equals ("true if both are null, or both have equal values").
 * https://learn.microsoft.com/dotnet/api/system.collections.generic.ienumerator-1, .../api/system.nullable
 */
import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

describe('IEnumerator<T>', () => {
  it.each([
    [
      'var e = new[] { 1, 2, 3 }.GetEnumerator(); var sum = 0; while (e.MoveNext()) sum += (int)e.Current; return sum.ToString();',
      '6',
    ],
    [
      'var e = new List<string> { "a", "b" }.GetEnumerator(); e.MoveNext(); e.MoveNext(); return e.Current + e.MoveNext() + e.MoveNext();',
      'bFalseFalse',
    ],
    ['var e = "ab".GetEnumerator(); e.MoveNext(); return e.Current.ToString();', 'a'],
    [
      'var e = new[] { 1, 2 }.GetEnumerator(); e.MoveNext(); e.MoveNext(); e.Reset(); e.MoveNext(); return e.Current.ToString();',
      '1',
    ],
    [
      'IEnumerator<int> e = new[] { 7 }.Where(x => x > 1).GetEnumerator(); using (e) { return (e.MoveNext() ? e.Current : 0).ToString(); }',
      '7',
    ],
    [
      'var d = new Dictionary<string, int> { { "k", 1 } }.GetEnumerator(); d.MoveNext(); return d.Current.Key;',
      'k',
    ],
  ])('%s → %s', (block, expected) => {
    expect(showBlock(block)).toBe(expected);
  });

  it('Current outside the sequence is an InvalidOperationException', () => {
    expect(failure('new[] { 1 }.GetEnumerator().Current')).toContain(
      'InvalidOperationException: Enumeration has not started. Call MoveNext.',
    );
    expect(
      failure('var e = new int[0].GetEnumerator(); e.MoveNext(); return e.Current.ToString();', 'block'),
    ).toContain('InvalidOperationException: Enumeration already finished.');
  });
});

describe('System.Nullable', () => {
  it.each([
    ['Nullable.Compare((int?)null, 1)', '-1'],
    ['Nullable.Compare((int?)5, (int?)null)', '1'],
    ['Nullable.Compare((int?)null, (int?)null)', '0'],
    ['Nullable.Compare((int?)3, 7)', '-1'],
    ['Nullable.Compare((int?)7, 7)', '0'],
    ['Nullable.Equals((int?)null, (int?)null)', 'True'],
    ['Nullable.Equals((int?)null, 0)', 'False'],
    ['Nullable.Equals((decimal?)1.0m, 1.00m)', 'True'],
    ['System.Nullable.Equals((bool?)true, true)', 'True'],
    // Nullable<T> as a type is T? (the name alone is the static class).
    ['((Nullable<int>)5).ToString()', '5'],
    ['Nullable.Compare((Nullable<int>)null, 1)', '-1'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});
