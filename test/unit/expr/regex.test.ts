import { describe, expect, it } from 'vitest';
import { compileExpression, ExpressionError, toDotNetString } from '../../../src/expr/index.js';
import { makeContext, show, showBlock } from '../../doubles/policy-context.js';

const ORIGIN = { file: 'policies/api.xml', line: 12, column: 7 };

/** The error an expression is refused with when it is compiled (policy load), with its position. */
function refusedAtLoad(text: string): ExpressionError {
  try {
    compileExpression(text, { kind: 'expression', origin: ORIGIN });
  } catch (e) {
    expect(e).toBeInstanceOf(ExpressionError);
    return e as ExpressionError;
  }
  throw new Error(`expected "${text}" to be refused at load`);
}

function failsAtRun(text: string): ExpressionError {
  const compiled = compileExpression(text, { kind: 'expression', origin: ORIGIN });
  try {
    compiled.evaluate(makeContext());
  } catch (e) {
    expect(e).toBeInstanceOf(ExpressionError);
    return e as ExpressionError;
  }
  throw new Error(`expected "${text}" to fail when run`);
}

describe('regexes run in linear time (issue 13: ReDoS stalled every API)', () => {
  // Under a backtracking engine each of these takes seconds to centuries; RE2 answers at once. No timing assertion:
  // the test would not finish (the worker would time out) if a backtracking engine ran them.
  it.each([
    ['Regex.IsMatch(new string(\'a\', 60), "a*a*a*a*a*a*a*b")', 'False'],
    ['Regex.IsMatch(new string(\'a\', 100000), "a*a*a*a*a*a*a*b")', 'False'],
    ['Regex.IsMatch(new string(\'a\', 60) + "b", "a*a*a*a*a*a*a*b")', 'True'],
    ['Regex.IsMatch(new string(\'a\', 5000) + "!", "^(a+)+$")', 'False'],
    ['Regex.IsMatch(new string(\'a\', 5000), "(a|aa)*b")', 'False'],
    ['Regex.Match(new string(\'a\', 5000) + "!", "(a+)+!").Groups[1].Length', '5000'],
    ['Regex.Replace(new string(\'a\', 5000), "(a*)*b", "x").Length', '5000'],
    ['new Regex("([a-z]+)+$").IsMatch(new string(\'a\', 5000) + "!")', 'False'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});

describe('constructs that need backtracking are refused when the policy loads', () => {
  it.each([
    ['Regex.IsMatch(context.Request.Url.Path, @"(a)\\1")', 'backreference', '\\1'],
    ['Regex.IsMatch(context.Request.Url.Path, @"(?<x>a)\\k<x>")', 'backreference', '\\k<x>'],
    ['Regex.IsMatch(context.Request.Url.Path, "a(?=b)")', 'lookahead', '(?='],
    ['Regex.IsMatch(context.Request.Url.Path, "a(?!b)")', 'lookahead', '(?!'],
    ['Regex.Match(context.Request.Url.Path, "(?<=a)b")', 'lookbehind', '(?<='],
    ['Regex.Matches(context.Request.Url.Path, "(?<!a)b")', 'lookbehind', '(?<!'],
    ['Regex.Replace(context.Request.Url.Path, "(?>a+)b", "")', 'atomic group', '(?>'],
    ['Regex.Split(context.Request.Url.Path, "a*+b")', 'possessive quantifier', '*+'],
    ['new Regex("(?(a)b|c)")', 'conditional group', '(?('],
    ['new Regex("(?<o>a)(?<c-o>b)")', 'balancing group', '(?<c-o>'],
    ['new Regex("\\\\Ga")', 'the \\G anchor', '\\G'],
    ['new Regex("a", RegexOptions.RightToLeft)', 'RightToLeft', ''],
  ])('%s: %s', (expr, construct, found) => {
    const e = refusedAtLoad(expr);
    expect(e.code).toBe('ExpressionSyntaxError');
    // file:line:col of the pattern argument, the call, the construct and what was found.
    const patternColumn = ORIGIN.column + expr.indexOf('"') - (expr[expr.indexOf('"') - 1] === '@' ? 1 : 0);
    expect(e.message.split('\n')[0]).toMatch(new RegExp(`^policies/api\\.xml:12:${patternColumn}: `));
    expect(e.message).toMatch(/^[^\n]*(Regex\.\w+|new Regex): the regular expression /);
    expect(e.reason).toContain(construct);
    if (found) expect(e.reason).toContain(`${construct} '${found}' at offset`);
    expect(e.reason).toContain('linear-time engine');
  });

  it('checks constant options too (IgnorePatternWhitespace hides a construct in a comment)', () => {
    expect(
      show('Regex.IsMatch("ab", "a # (?=x) is only a comment\\n b", RegexOptions.IgnorePatternWhitespace)'),
    ).toBe('True');
    expect(
      refusedAtLoad('Regex.IsMatch("ab", "a(?=b)", RegexOptions.IgnoreCase | RegexOptions.Multiline)').reason,
    ).toContain('lookahead');
  });

  it('an invalid pattern is refused at load with the engine’s reason', () => {
    expect(refusedAtLoad('Regex.IsMatch("a", "a{2000}")').reason).toContain('invalid repeat count');
    expect(refusedAtLoad('Regex.IsMatch("a", "(a")').reason).toContain('not enough )');
  });

  it('a pattern whose program would be too large to compile quickly is refused before re2js compiles it', () => {
    // Counted repetitions copy what they repeat: ten of these compiled to 50,000 instructions in 0.14 s, and a
    // client can send a pattern built so at run time (100 of them: 500,000 instructions, 0.9 s).
    const copies = (n: number) =>
      Array.from({ length: n }, (_v, k) => `(.*${'abcdefghij'[k]}){1000}`).join('|');
    expect(refusedAtLoad(`Regex.IsMatch("a", "${copies(10)}")`).reason).toContain(
      'it would compile to about 60,009 instructions, more than the 20,000 a pattern may have',
    );
    const e = failsAtRun(`Regex.IsMatch("a", "${copies(5)}" + "|${copies(5)}")`);
    expect(e.exceptionType).toBe('ArgumentException');
    expect(e.reason).toContain('more than the 20,000 a pattern may have');
    // What real patterns do stays well inside.
    expect(show(`Regex.IsMatch("a", "${copies(3)}")`)).toBe('False');
    expect(show('Regex.IsMatch(new string(\'x\', 1000), @"^[\\p{L}\\p{N}]{1,1000}$")')).toBe('True');
  });

  it('a pattern built at run time fails safely at run time (ArgumentException, LastError), never backtracks', () => {
    const e = failsAtRun('Regex.IsMatch("ab", "a(?" + "=b)")');
    expect(e.code).toBe('ExpressionValueEvaluationFailure');
    expect(e.exceptionType).toBe('ArgumentException');
    expect(e.reason).toContain('lookahead');
    expect(e.message).toMatch(/^policies\/api\.xml:12:\d+: /);
    expect(
      showBlock(
        'try { return Regex.IsMatch("aa", "(a)" + "\\\\1").ToString(); } catch (ArgumentException e) { return "refused"; }',
      ),
    ).toBe('refused');
  });
});

describe('.NET semantics on RE2', () => {
  it.each([
    // .NET numbers unnamed groups first, then named ones.
    ['Regex.Match("ab", "(?<x>a)(b)").Groups[1].Value', 'b'],
    ['Regex.Match("ab", "(?<x>a)(b)").Groups[2].Value', 'a'],
    ['Regex.Match("ab", "(?<x>a)(b)").Groups["x"].Value', 'a'],
    ['Regex.Match("ab", "(?<x>a)(b)").Groups["2"].Name', 'x'],
    ['Regex.Match("ab", "(?<x>a)(b)").Groups.Count', '3'],
    ['Regex.Match("k=v", @"(?\'key\'\\w+)=(?\'val\'\\w+)").Groups["val"].Value', 'v'],
    ['Regex.Match("xxab", "(a)(b)").Groups[2].Index', '3'],
    ['Regex.Match("b", "(a)?b").Groups[1].Success', 'False'],
    ['Regex.Match("abc", "z").Groups[1].Success', 'False'],
    ['Regex.Match("😀ab", "b").Index', '3'],
    // Unicode \d \w \s, as .NET's default; ASCII under RegexOptions.ECMAScript.
    ['Regex.IsMatch("٣", @"^\\d$")', 'True'],
    ['Regex.IsMatch("٣", @"^\\d$", RegexOptions.ECMAScript)', 'False'],
    ['Regex.IsMatch("é", @"^\\w$")', 'True'],
    ['Regex.IsMatch("é", @"^[\\W]$")', 'False'],
    ['Regex.IsMatch("\\u00A0", @"^\\s$")', 'True'],
    ['Regex.IsMatch("x", @"^[^\\S]$")', 'False'],
    ['Regex.IsMatch("]", "[]a]")', 'True'],
    ['Regex.IsMatch("{", "a{|{")', 'True'],
    [
      'Regex.IsMatch("A", @"\\u0041\\x41", RegexOptions.None) || Regex.IsMatch("AA", @"\\u0041\\x41")',
      'True',
    ],
    // Options, inline options, comments.
    ['Regex.IsMatch("ABC", "abc", RegexOptions.IgnoreCase)', 'True'],
    ['Regex.IsMatch("x\\nabc", "^abc$", RegexOptions.Multiline)', 'True'],
    ['Regex.IsMatch("a\\nb", "a.b", RegexOptions.Singleline)', 'True'],
    ['Regex.IsMatch("a\\nb", "a.b")', 'False'],
    ['Regex.IsMatch("ABC", "(?i)abc")', 'True'],
    ['Regex.IsMatch("aBC", "a(?i:bc)")', 'True'],
    ['Regex.Match("ab", "(a)(?<n>b)", RegexOptions.ExplicitCapture).Groups.Count', '2'],
    ['Regex.Match("ab", "(?n)(a)(b)").Groups.Count', '1'],
    ['Regex.IsMatch("ab", "a(?#comment)b")', 'True'],
    // Replace substitutions.
    ['Regex.Replace("john smith", @"(\\w+) (\\w+)", "$2, $1")', 'smith, john'],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: .NET substitution syntax.
    ['Regex.Replace("a-b", "(?<x>a)", "${x}${x}|$0|$&|$$")', 'aa|a|a|$-b'],
    ['Regex.Replace("ab", "(a)", "$10")', '$10b'],
    ['Regex.Replace("abc", "b", "[$`|$\'|$_]")', 'a[a|c|abc]c'],
    ['Regex.Replace("baaac", "a*", "-")', '-b--c-'],
    ['Regex.Replace("aaa", "a", "b", RegexOptions.None)', 'bbb'],
    ['new Regex("a").Replace("aaa", "b", 2)', 'bba'],
    ['Regex.Replace("Hello", "L", m => m.Value.ToUpper(), RegexOptions.IgnoreCase)', 'HeLLo'],
    ['Regex.Match("abc", "(b)").Result("<$1>")', '<b>'],
    // Split inserts captured groups; empty matches split between every character.
    ['string.Join("|", Regex.Split("a1b2c", @"(\\d)"))', 'a|1|b|2|c'],
    ['string.Join("|", Regex.Split("abc", ""))', '|a|b|c|'],
    ['string.Join("|", new Regex(",").Split("a,b,c", 2))', 'a|b,c'],
    // Iteration.
    ['Regex.Matches("a1b22c333", @"\\d+").Count()', '3'],
    ['Regex.Match("a1b22", @"\\d+").NextMatch().Value', '22'],
    ['Regex.Match("a1b22", @"\\d+").NextMatch().NextMatch().Success', 'False'],
    ['string.Join(",", Regex.Matches("abc", "x*").Select(m => m.Index))', '0,1,2,3'],
    ['new Regex("b").IsMatch("ab", 1)', 'True'],
    // IsMatch runs on the DFA, Match on the NFA: both see the input before `startat`.
    ['new Regex("^b").IsMatch("ab", 1)', 'False'],
    ['new Regex(@"\\bb").IsMatch("ab", 1)', 'False'],
    ['new Regex(@"\\bb").Match("ab", 1).Success', 'False'],
    ['new Regex(@"\\Bb").IsMatch("ab", 1)', 'True'],
    ['new Regex("(?<y>\\\\d+)").GetGroupNames()[1]', 'y'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});

describe('repeated searches are bounded by a time budget (.NET match timeout)', () => {
  // Each search is linear, but every match of `a(?:.*z)?` must look ahead to the end of the input, so finding all
  // 20,000 of them is quadratic (about 20 s); the budget stops it after maxRegexMilliseconds.
  const QUADRATIC = 'new string(\'a\', 20000), "a(?:.*z)?"';

  it.each([
    `Regex.Matches(${QUADRATIC}).Count()`,
    `Regex.Replace(${QUADRATIC}, "b")`,
    `Regex.Split(${QUADRATIC}).Length`,
  ])('%s fails with RegexMatchTimeoutException', (text) => {
    const e = failsAtRun(text);
    expect(e.code).toBe('ExpressionValueEvaluationFailure');
    expect(e.exceptionType).toBe('RegexMatchTimeoutException');
    expect(e.reason).toContain('more than the limit of 100 ms');
  });

  it('catching the timeout does not buy more searching: later searches fail before they start', () => {
    expect(
      showBlock(`var timeouts = 0;
        for (var i = 0; i < 1000; i++) {
          try { Regex.Replace(${QUADRATIC}, "b"); } catch (RegexMatchTimeoutException) { timeouts++; }
        }
        return timeouts;`),
    ).toBe('1000');
  });
});

describe('one search is stopped while it runs (issue 29: one request held the engine for seconds)', () => {
  // RE2 is linear, but in the input times the pattern: without a bound inside the search each of these held the
  // engine's only thread from 0.5 s (60,000 characters) to 30 s ((.*a){50} over 1 Mi), and IsMatch/Match returned
  // a value at the end. Now the search stops at the budget (maxRegexMilliseconds).
  const commas = "new string(',', 1048576)";
  const as60k = "new string('a', 60000)";
  const as1M = "new string('a', 1048576)";
  const RUN_TIME = 'string.Concat("(.*a){", "50}")';

  it.each([
    `Regex.Match(${commas}, "(.*,){10}").Success`,
    `Regex.Match(${as1M}, "(.*a){50}").Success`,
    `Regex.Match(${as60k}, "(.*a){50}").Success`,
    `Regex.Match(${as60k}, ${RUN_TIME}).Success`,
    `new Regex(${RUN_TIME}).Match(${as60k}).Groups[1].Value`,
    `Regex.Matches(${as60k}, "(.*a){50}").Count()`,
    `Regex.Replace(${as60k}, "(.*a){50}", "x")`,
    `Regex.Split(${as60k}, "(.*a){50}").Length`,
    `Regex.Match("b" + ${as60k}, "(.*a){50}").NextMatch().Success`,
  ])('%s fails with RegexMatchTimeoutException, the search stopped', (text) => {
    const e = failsAtRun(text);
    expect(e.exceptionType).toBe('RegexMatchTimeoutException');
    expect(e.reason).toMatch(
      /took more than the limit of 100 ms \(maxRegexMilliseconds\) in this evaluation: the search for "[^"]+" in \d+ characters was stopped$/,
    );
  });

  it('IsMatch, which runs on the DFA, is stopped too when the DFA gives up and the NFA takes over', () => {
    // `(a|b)*a(a|b){25}(c|d)` needs 2^26 DFA states over random a/b text: re2js's DFA cache overflows and the NFA runs.
    let seed = 12345;
    let text = '';
    for (let i = 0; i < 1_000_000; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += (seed >> 16) & 1 ? 'a' : 'b';
    }
    const compiled = compileExpression(
      'Regex.IsMatch(context.Request.Body.As<string>(), "(a|b)*a(a|b){25}(c|d)")',
      { kind: 'expression', origin: ORIGIN },
    );
    let error: unknown;
    try {
      compiled.evaluate(makeContext(text));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ExpressionError);
    expect((error as ExpressionError).exceptionType).toBe('RegexMatchTimeoutException');
    expect((error as ExpressionError).reason).toMatch(/was stopped$/);
  });

  it.each([
    // IsMatch needs no groups: the DFA answers the issue's pattern without running the NFA at all.
    [`Regex.IsMatch(${commas}, "(.*,){10}")`, 'True'],
    [`Regex.IsMatch(${as1M}, "(.*a){50}")`, 'True'],
    // Long inputs with ordinary patterns run metered and answer as before.
    [`Regex.Match(new string('x', 1000000) + "id=42;", @"id=(\\d+);").Groups[1].Value`, '42'],
    [`Regex.Replace(new string('x', 1000000), @"\\d{16}", "*").Length`, '1000000'],
    [`Regex.Matches(string.Concat(Enumerable.Repeat("k=v;", 1000)), @"(\\w)=(\\w)").Count()`, '1000'],
    ['Regex.Match("Bearer abc.def", "^Bearer (.+)$").Groups[1].Value', 'abc.def'],
  ])('%s → %s', (expr, expected) => {
    // What is checked is the answer of a metered search, not its speed: a budget no machine, however busy, runs
    // out of (the default 100 ms is a few times these searches' cost on an idle core, not on a loaded CI runner).
    const compiled = compileExpression(expr, {
      kind: 'expression',
      limits: { maxRegexMilliseconds: 60_000 },
    });
    expect(toDotNetString(compiled.evaluate(makeContext()))).toBe(expected);
  });
});

describe('Capture, CaptureCollection, Group.Captures and Match.Empty', () => {
  // Expected values from the .NET documentation: Capture (Index, Length, Value), Group.Captures ("the collection of
  // all the captures matched by the capturing group"), Match.Empty ("an empty group. All failed matches return this
  // empty match"): https://learn.microsoft.com/dotnet/api/system.text.regularexpressions.capture,
  // .group.captures, .match.empty
  it.each([
    ['Regex.Match("xxab", "(a)(b)").Groups[2].Captures.Count', '1'],
    ['Regex.Match("xxab", "(a)(b)").Groups[2].Captures[0].Value', 'b'],
    ['Regex.Match("xxab", "(a)(b)").Groups[2].Captures[0].Index', '3'],
    ['Regex.Match("xxab", "(a)(b)").Groups[2].Captures[0].Length', '1'],
    ['Regex.Match("xxab", "(a)(b)").Captures[0].Value', 'ab'],
    ['Regex.Match("b", "(a)?b").Groups[1].Captures.Count', '0'],
    ['Regex.Match("xxab", "(a)(b)").Groups[1].Captures.Select(c => c.Value + c.Index).First()', 'a2'],
    ['Regex.Match("xxab", "(a)(b)").Groups[1] is Capture', 'True'],
    ['Regex.Match("xxab", "(a)(b)") is Group', 'True'],
    ['Match.Empty.Success', 'False'],
    ['Match.Empty.Value.Length', '0'],
    ['Match.Empty.Index', '0'],
    ['Match.Empty.Groups.Count', '1'],
    ['Match.Empty == Match.Empty', 'True'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('an index past the captures is an ArgumentOutOfRangeException', () => {
    expect(
      showBlock(
        'try { return Regex.Match("b", "(a)?b").Groups[1].Captures[0].Value; } catch (ArgumentOutOfRangeException) { return "out of range"; }',
      ),
    ).toBe('out of range');
  });

  // .NET records every repetition of a quantified group ("(a)+" on "aaa" has three captures); RE2 keeps only the last,
  // a difference listed in docs/differences.md.
  it('a repeated group has its last capture only', () => {
    expect(show('Regex.Match("abc", "(\\\\w)+").Groups[1].Captures.Count')).toBe('1');
    expect(show('Regex.Match("abc", "(\\\\w)+").Groups[1].Captures[0].Value')).toBe('c');
  });
});
