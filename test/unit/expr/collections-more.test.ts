import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

// Types of the allowed-types table (api-management-policy-expressions#CLRTypes) with .NET's behaviour:
// Queue<T>, Stack<T>, Tuple, Enum.Parse/TryParse.
describe('Queue<T>, Stack<T>, Tuple and Enum.Parse', () => {
  it.each([
    [
      'var q = new Queue<string>(); q.Enqueue("a"); q.Enqueue("b"); return q.Dequeue() + q.Peek() + q.Count;',
      'ab1',
    ],
    ['var q = new Queue<int>(new[] { 1, 2, 3 }); return string.Join(",", q);', '1,2,3'],
    ['var q = new Queue<int>(); int x; return q.TryDequeue(out x) + ":" + x;', 'False:0'],
    ['var s = new Stack<string>(); s.Push("a"); s.Push("b"); return s.Pop() + s.Peek() + s.Count;', 'ba1'],
    [
      'var s = new Stack<int>(new[] { 1, 2, 3 }); return string.Join(",", s) + "|" + string.Join(",", s.ToArray());',
      '3,2,1|3,2,1',
    ],
    [
      'var s = new Stack<int>(); s.Push(1); s.Push(2); return s.Where(x => x > 1).Count() + s.Contains(1).ToString();',
      '1True',
    ],
    ['var t = Tuple.Create(1, "a", 2.5); return t.Item1 + t.Item2 + t.Item3;', '1a2.5'],
    ['return new Tuple<int, string>(7, "x").ToString();', '(7, x)'],
    ['return Tuple.Create(1, "a").Equals(Tuple.Create(1, "a"));', 'True'],
    ['return Enum.Parse<StringComparison>("OrdinalIgnoreCase").ToString();', 'OrdinalIgnoreCase'],
    ['return Enum.Parse<MidpointRounding>("awayfromzero", true).ToString();', 'AwayFromZero'],
    ['return Enum.Parse<RegexOptions>("IgnoreCase, Multiline").ToString();', 'IgnoreCase, Multiline'],
    ['DayOfWeek d; return Enum.TryParse<DayOfWeek>("Friday", out d) + ":" + d;', 'True:Friday'],
    ['DayOfWeek d; return Enum.TryParse<DayOfWeek>("Funday", out d) + ":" + d;', 'False:Sunday'],
  ])('%s → %s', (block, expected) => {
    expect(showBlock(block)).toBe(expected);
  });

  it.each([
    ['new Queue<int>().Dequeue()', 'InvalidOperationException: Queue empty.'],
    ['new Stack<int>().Pop()', 'InvalidOperationException: Stack empty.'],
    ['Enum.Parse<DayOfWeek>("Funday")', "Requested value 'Funday' was not found."],
    ['Tuple.Create(1).Item2', 'InvalidOperationException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });

  it('a Queue keeps to the collection size limit', () => {
    expect(failure('new Queue<int>(Enumerable.Range(0, 20000000))')).toMatch(/limit/);
  });
});

// LINQ to XML's explicit conversions read values with XmlConvert's rules:
// https://learn.microsoft.com/dotnet/api/system.xml.linq.xelement#operators
describe('LINQ to XML explicit conversions', () => {
  const doc =
    'XElement.Parse("<o id=\\" 42 \\" ok=\\"True\\"><n>12.50</n><d>1e3</d><big>3000000000</big></o>")';
  it.each([
    [`(int)${doc}.Attribute("id")`, '42'],
    [`(bool)${doc}.Attribute("ok")`, 'True'],
    [`(decimal)${doc}.Element("n")`, '12.50'],
    [`(double)${doc}.Element("d")`, '1000'],
    [`(long)${doc}.Element("big")`, '3000000000'],
    [`(string)${doc}.Element("n")`, '12.50'],
    [`(string)${doc}.Element("missing") ?? "none"`, 'none'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    [`(int)${doc}.Element("n")`, 'FormatException'],
    [`(int)${doc}.Element("big")`, 'OverflowException'],
    [`(decimal)${doc}.Element("d")`, 'FormatException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});
