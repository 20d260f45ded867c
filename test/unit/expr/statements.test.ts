import { describe, expect, it } from 'vitest';
import { failure, showBlock } from '../../doubles/policy-context.js';

describe('@{ } statement blocks', () => {
  it.each([
    ['return 1;', '1'],
    ['var x = 2; x = x * 3; return x;', '6'],
    ['int a = 1, b = 2; return a + b;', '3'],
    ['double d = 5; return d / 2;', '2.5'],
    ['long l = int.MaxValue; l = l + 1; return l;', '2147483648'],
    ['string s = null; return s ?? "null";', 'null'],
    ['var i = 0; i++; i += 5; i -= 1; i *= 2; return i;', '10'],
    ['var i = 10; i /= 3; return i;', '3'],
    ['var i = 10; i %= 3; return i;', '1'],
    ['var s = "a"; s += "b"; return s;', 'ab'],
    ['string s = null; s ??= "d"; return s;', 'd'],
    ['var i = 5; var j = i++; return j * 10 + i;', '56'],
    ['var i = 5; var j = ++i; return j * 10 + i;', '66'],
    ['if (1 > 2) { return "a"; } else if (2 > 1) { return "b"; } else { return "c"; }', 'b'],
    ['if (true) return "x"; return "y";', 'x'],
    ['var n = 0; for (var i = 0; i < 5; i++) { n += i; } return n;', '10'],
    ['var n = 0; for (int i = 0, j = 10; i < j; i++, j--) n++; return n;', '5'],
    ['var n = 0; while (n < 7) n += 2; return n;', '8'],
    ['var n = 0; do { n++; } while (n < 3); return n;', '3'],
    ['var n = 0; while (true) { n++; if (n == 4) break; } return n;', '4'],
    ['var n = 0; for (var i = 0; i < 10; i++) { if (i % 2 == 0) continue; n += i; } return n;', '25'],
    ['var sum = 0; foreach (var x in new[] { 1, 2, 3 }) sum += x; return sum;', '6'],
    ['var s = ""; foreach (string x in new List<string> { "a", "b" }) { s += x; } return s;', 'ab'],
    ['var s = ""; foreach (var c in "abc") { s = c + s; } return s;', 'cba'],
    [
      'var s = ""; foreach (var kv in new Dictionary<string, int> { { "a", 1 }, { "b", 2 } }) s += kv.Key + kv.Value; return s;',
      'a1b2',
    ],
    ['switch (2) { case 1: return "one"; case 2: return "two"; default: return "many"; }', 'two'],
    ['switch ("x") { case "a": case "x": return "ax"; default: return "d"; }', 'ax'],
    ['var r = ""; switch (5) { case 1: r = "one"; break; default: r = "other"; break; } return r;', 'other'],
    [
      'object o = 3; switch (o) { case string s: return "str " + s; case int i when i > 2: return "big " + i; default: return "?"; }',
      'big 3',
    ],
    [
      'try { return int.Parse("x").ToString(); } catch (FormatException e) { return "bad: " + e.GetType(); }',
      'error',
    ],
    ['try { return int.Parse("x").ToString(); } catch (FormatException) { return "bad"; }', 'bad'],
    [
      'try { return int.Parse("x").ToString(); } catch (Exception ex) { return ex.Message; }',
      "The input string 'x' was not in a correct format.",
    ],
    [
      'try { throw new InvalidOperationException("boom"); } catch (ArgumentException) { return "arg"; } catch (Exception e) { return e.Message; }',
      'boom',
    ],
    ['var log = ""; try { log += "t"; } finally { log += "f"; } return log;', 'tf'],
    [
      'try { var x = ((string)null).Length; return "no"; } catch (NullReferenceException) { return "npe"; }',
      'npe',
    ],
    [
      'try { return context.Variables["missing"].ToString(); } catch (KeyNotFoundException) { return "knf"; }',
      'knf',
    ],
    [
      'try { throw new Exception("a"); } catch (Exception e) when (e.Message == "b") { return "b"; } catch { return "other"; }',
      'other',
    ],
    ['int Twice(int x) { return x * 2; } return Twice(21);', '42'],
    ['return Sq(4); int Sq(int x) => x * x;', '16'],
    ['int Fact(int n) { return n <= 1 ? 1 : n * Fact(n - 1); } return Fact(10);', '3628800'],
    ['var total = 0; void Add(int x) { total += x; } Add(2); Add(3); return total;', '5'],
    ['Func<int, int> inc = x => x + 1; return inc(1);', '2'],
    ['Func<int, int, int> add = (a, b) => a + b; return add.Invoke(2, 3);', '5'],
    ['var f = (Func<string, string>)(s => s.ToUpper()); return f("q");', 'Q'],
    ['if (int.TryParse("123", out var n)) { return n + 1; } return -1;', '124'],
    ['int n; var ok = int.TryParse("zz", out n); return ok + ":" + n;', 'False:0'],
    ['if (context.Variables.TryGetValue("name", out object v)) return (string)v; return "none";', 'Ada'],
    ['var arr = new int[3]; arr[1] = 5; return arr[0] + arr[1] + arr.Length;', '8'],
    ['var arr = new string[] { "a", "b" }; arr[0] = "z"; return string.Join("", arr);', 'zb'],
    ['string[] arr = { "p", "q" }; return arr[1];', 'q'],
    [
      'var list = new List<int>(); list.Add(1); list.AddRange(new[] { 2, 3 }); list.Remove(2); return list.Count + ":" + list[1];',
      '2:3',
    ],
    [
      'var d = new Dictionary<string, string>(); d["a"] = "1"; d.Add("b", "2"); return d.Count + d["b"] + d.ContainsKey("a");',
      '22True',
    ],
    [
      'var d = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase) { { "Key", "v" } }; return d["KEY"];',
      'v',
    ],
    [
      'var d = new Dictionary<string, int> { ["x"] = 1 }; return d.TryGetValue("x", out var v) ? v : -1;',
      '1',
    ],
    ['var h = new HashSet<string> { "a" }; var added = h.Add("a"); return added + "," + h.Count;', 'False,1'],
    ['var a = new { Name = "n", Age = 3 }; return a.Name + a.Age;', 'n3'],
    ['var x = 1; { var y = 2; x += y; } return x;', '3'],
    ['const int K = 7; return K * 2;', '14'],
    ['return;', 'syntax'],
  ])('%s → %s', (block, expected) => {
    if (expected === 'error' || expected === 'syntax') {
      expect(failure(block, 'block')).not.toBe('no error');
      return;
    }
    expect(showBlock(block)).toBe(expected);
  });

  it.each([
    ['var x = 1;', 'not all code paths return a value'],
    ['if (true) { return 1; }', 'not all code paths return a value'],
    ['var x = 1; var x = 2; return x;', "a local variable named 'x' is already defined"],
    ['return y;', "the name 'y' does not exist in the current context"],
    ['1 + 2; return 1;', 'only assignment, call, increment'],
    ['throw new ArgumentException("nope");', 'ArgumentException: nope'],
  ])('%s fails with %s', (block, expected) => {
    expect(failure(block, 'block')).toContain(expected);
  });
});
