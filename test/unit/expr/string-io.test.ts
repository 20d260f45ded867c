/**
 * System.IO.StringReader and StringWriter. Expected values from the .NET API reference
 * (https://learn.microsoft.com/dotnet/api/system.io.stringreader and .stringwriter): Read and Peek return -1 at the
 * end of the string; ReadLine splits at "\n", "\r" or "\r\n" and returns null at the end; a closed reader throws
 * ObjectDisposedException; StringWriter writes into a StringBuilder (GetStringBuilder) and ToString returns it.
 */
import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

describe('StringReader', () => {
  it.each([
    ['new StringReader("ab").Read()', '97'],
    ['new StringReader("").Read()', '-1'],
    ['new StringReader("").Peek()', '-1'],
    ['new StringReader("abc").ReadToEnd()', 'abc'],
    ['new StringReader("one\\r\\ntwo\\rthree\\nfour").ReadLine()', 'one'],
    ['new StringReader("").ReadLine() == null', 'True'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    [
      'var r = new StringReader("one\\r\\ntwo\\rthree\\nfour\\n"); var lines = new List<string>(); string line; while ((line = r.ReadLine()) != null) lines.Add(line); return string.Join("|", lines);',
      'one|two|three|four',
    ],
    [
      'var r = new StringReader("xy"); var p = r.Peek(); var a = r.Read(); return p + "," + a + "," + (char)r.Read() + "," + r.Read();',
      '120,120,y,-1',
    ],
    [
      'var r = new StringReader("hello"); var buf = new char[4]; var n = r.Read(buf, 1, 3); return n + ":" + new string(buf, 1, 3) + ":" + r.ReadToEnd();',
      '3:hel:lo',
    ],
    ['var r = new StringReader("hi"); var buf = new char[5]; return r.ReadBlock(buf, 0, 5).ToString();', '2'],
    ['using (var r = new StringReader("a\\nb")) { r.ReadLine(); return r.ReadLine(); }', 'b'],
  ])('%s → %s', (block, expected) => {
    expect(showBlock(block)).toBe(expected);
  });

  it('a closed reader throws ObjectDisposedException', () => {
    expect(
      failure('var r = new StringReader("a"); r.Close(); return r.Read().ToString();', 'block'),
    ).toContain('ObjectDisposedException: Cannot read from a closed TextReader.');
  });
});

describe('StringWriter', () => {
  it.each([
    [
      'var w = new StringWriter(); w.Write("a"); w.Write(1); w.Write(true); w.Write(\'c\'); return w.ToString();',
      'a1Truec',
    ],
    ['var w = new StringWriter(); w.WriteLine("x"); w.WriteLine(); return w.ToString();', 'x\n\n'],
    ['var w = new StringWriter(); w.Write("{0}-{1}", 1, "b"); return w.ToString();', '1-b'],
    ["var w = new StringWriter(); w.Write(new[] { 'a', 'b', 'c' }, 1, 2); return w.ToString();", 'bc'],
    [
      'var sb = new StringBuilder("pre:"); var w = new StringWriter(sb); w.Write("x"); return sb.ToString();',
      'pre:x',
    ],
    [
      'var w = new StringWriter(); w.Write("x"); w.GetStringBuilder().Append("y"); return w.ToString();',
      'xy',
    ],
    [
      'var w = new StringWriter(); w.NewLine = "\\r\\n"; w.WriteLine("a"); return w.ToString().Length.ToString();',
      '3',
    ],
    ['var w = new StringWriter(); w.Write("kept"); w.Close(); return w.ToString();', 'kept'],
  ])('%s → %s', (block, expected) => {
    expect(showBlock(block)).toBe(expected);
  });

  it('a closed writer throws ObjectDisposedException', () => {
    expect(failure('var w = new StringWriter(); w.Dispose(); w.Write("a"); return "";', 'block')).toContain(
      'ObjectDisposedException: Cannot write to a closed TextWriter.',
    );
  });

  it('its text counts against the string length limit', () => {
    expect(
      failure(
        'var w = new StringWriter(); for (var i = 0; i < 100; i++) w.Write(new string(\'a\', 100000)); return "";',
        'block',
      ),
    ).toContain('exceeds the limit');
  });
});

describe('ObjectDisposedException', () => {
  it('is an InvalidOperationException, as in .NET', () => {
    expect(
      showBlock(
        'var r = new StringReader("a"); r.Dispose(); try { r.Peek(); return "read"; } catch (InvalidOperationException e) { return e is ObjectDisposedException ? "disposed" : "other"; }',
      ),
    ).toBe('disposed');
  });
});
