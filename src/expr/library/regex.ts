/**
 * System.Text.RegularExpressions on a linear-time engine. .NET runs regexes with a backtracking engine guarded by a
 * match timeout; JavaScript's RegExp backtracks too and cannot be interrupted, so one hostile pattern or input
 * (`a*a*a*a*a*a*a*b` on 60 `a`s) would hold the engine's only thread for seconds. Every expression regex therefore
 * runs on re2js (RE2 semantics: time linear in the input, no backtracking at all, never a fallback to RegExp). Linear
 * in the input times the pattern is still seconds for `(.*a){50}` over a megabyte, so every search runs within the
 * evaluation's time budget, enforced while it runs (runtime/bounded-search.ts).
 *
 * A .NET pattern is translated to RE2 syntax once, here, by one table-driven walk; constructs RE2 cannot run are
 * refused with a message naming the construct and where it is. A pattern written as a literal is checked when the
 * policy loads (the compiler calls the constant-argument checks below); a pattern built while the request runs is
 * checked when it is first used and fails as an ArgumentException (LastError), never by running another engine.
 *
 * Kept from .NET: Unicode `\d \w \s` (as .NET's default), group numbering (unnamed groups first, then named ones),
 * Capture ← Group ← Match and GroupCollection with Success, Value, Index and Length (Captures: the last capture only,
 * as RE2 keeps no others), `$1 ${name} $0 $& $$ $+ $_ ` $'` substitutions, the empty-match stepping of Matches/Replace/Split and the captured groups Split inserts.
 * Differences (documented in docs/security.md, "Expressions", and docs/differences.md): `$` and `\Z` match only at the very end of the input
 * (not before a final newline) unless RegexOptions.Multiline is set; `\b` uses ASCII word characters.
 */
import { RE2JS, RE2JSException } from 're2js';
import { compileBounded, dfaFirst, matchesFrom, searchWithinBudget } from '../runtime/bounded-search.js';
import { toDotNetStringRt } from '../runtime/convert.js';
import {
  ArgumentRefusal,
  argError,
  type ConstantArgsCheck,
  CsException,
  checkSize,
  checkStringLength,
  defineType,
  prop,
  type Rt,
  UNKNOWN_ARG,
} from '../runtime/core.js';
import { CsEnum, makeEnum } from '../runtime/enum.js';
import { defineEnumType } from './enums.js';
import { int, str } from './helpers.js';

export const RegexOptionsEnum = makeEnum('RegexOptions', {
  None: 0,
  IgnoreCase: 1,
  Multiline: 2,
  ExplicitCapture: 4,
  Compiled: 8,
  Singleline: 16,
  IgnorePatternWhitespace: 32,
  RightToLeft: 64,
  ECMAScript: 256,
  CultureInvariant: 512,
  NonBacktracking: 1024,
});
defineEnumType(RegexOptionsEnum, 'System.Text.RegularExpressions');

const {
  None: NO_OPTIONS,
  IgnoreCase: IGNORE_CASE,
  Multiline: MULTILINE,
  ExplicitCapture: EXPLICIT_CAPTURE,
  Singleline: SINGLELINE,
  IgnorePatternWhitespace: IGNORE_PATTERN_WHITESPACE,
  RightToLeft: RIGHT_TO_LEFT,
  ECMAScript: ECMASCRIPT,
} = RegexOptionsEnum.members;

/** A pattern the linear-time engine cannot run, or that is not a valid .NET pattern. `message` is for the user. */
export class RegexRefusal extends Error {}

// ---- translation table: .NET syntax → RE2 syntax ----

/** .NET's \w: letters, non-spacing marks, decimal digits and connector punctuation (Unicode, not ASCII). */
const WORD = '\\p{L}\\p{Mn}\\p{Nd}\\p{Pc}';
/** .NET's \s: the ASCII white space characters, NEL and the Unicode separators. */
const SPACE = '\\t\\n\\v\\f\\r\\x{85}\\p{Z}';

/**
 * Class shorthands. `outside` is used in the pattern, `inside` within [...]. RE2 cannot negate a union inside a
 * class, so \W and \S there become the explicit complement ranges (computed once, on first use).
 */
const SHORTHANDS: Record<string, { outside: string; inside: () => string }> = {
  d: { outside: '\\p{Nd}', inside: () => '\\p{Nd}' },
  D: { outside: '\\P{Nd}', inside: () => '\\P{Nd}' },
  w: { outside: `[${WORD}]`, inside: () => WORD },
  W: { outside: `[^${WORD}]`, inside: () => complementOf('W', /[\p{L}\p{Mn}\p{Nd}\p{Pc}]/u) },
  s: { outside: `[${SPACE}]`, inside: () => SPACE },
  S: { outside: `[^${SPACE}]`, inside: () => complementOf('S', /[\t\n\v\f\r\x85\p{Z}]/u) },
};

/** Escapes RE2 spells differently (or not at all). */
const CHARACTER_ESCAPES: Record<string, string> = {
  a: '\\x{7}',
  e: '\\x{1B}',
  f: '\\f',
  n: '\\n',
  r: '\\r',
  t: '\\t',
  v: '\\v',
};

/** Zero-width assertions outside classes. `\Z` is approximated by end of input (see the module comment). */
const ANCHOR_ESCAPES: Record<string, string> = { b: '\\b', B: '\\B', A: '\\A', z: '\\z', Z: '\\z' };

/** Constructs that need backtracking (or another engine's state), refused as "<what> '<found>' at offset N <why>". */
const BACKTRACKING = 'needs a backtracking engine';
const REFUSED = {
  backreference: ['a backreference', BACKTRACKING],
  lookahead: ['a lookahead', BACKTRACKING],
  lookbehind: ['a lookbehind', BACKTRACKING],
  atomic: ['an atomic group', BACKTRACKING],
  possessive: ['a possessive quantifier', BACKTRACKING],
  conditional: ['a conditional group', BACKTRACKING],
  balancing: ['a balancing group', BACKTRACKING],
  contiguous: ['the \\G anchor', 'is not supported (matches are searched independently)'],
  subtraction: ['character class subtraction', 'is not supported'],
  block: ['a Unicode block name', 'is not supported; use a script or category such as \\p{Greek}'],
  numberedName: ['a numbered group name', 'is not supported; name the group with a word'],
  duplicateName: ['a group name used twice', 'is not supported'],
} as const satisfies Record<string, readonly [string, string]>;

const complementCache = new Map<string, string>();

/** The code points NOT in `set`, as RE2 class ranges (for \W and \S inside a character class). */
function complementOf(key: string, set: RegExp): string {
  let ranges = complementCache.get(key);
  if (ranges === undefined) {
    const parts: string[] = [];
    let from = -1;
    for (let cp = 0; cp <= 0x110000; cp++) {
      const outside = cp < 0x110000 && !set.test(String.fromCodePoint(cp));
      if (outside && from < 0) from = cp;
      if (!outside && from >= 0) {
        parts.push(from === cp - 1 ? hex(from) : `${hex(from)}-${hex(cp - 1)}`);
        from = -1;
      }
    }
    ranges = parts.join('');
    complementCache.set(key, ranges);
  }
  return ranges;
}

const hex = (cp: number): string => `\\x{${cp.toString(16).toUpperCase()}}`;

const ASCII_PUNCTUATION = /[!-/:-@[-`{-~]/;

interface Scope {
  explicitCapture: boolean;
  ignoreWhitespace: boolean;
  /** An upper bound of the RE2 instructions this group's contents compile to so far (see MAX_PROGRAM_SIZE). */
  size: number;
  /** The same for its last atom, which a quantifier after it multiplies. */
  last: number;
}

/**
 * Instructions a compiled pattern may have. re2js compiles at 2–20 µs an instruction on the engine's only thread, and
 * counted repetitions copy what they repeat: `(.*a){1000}|(.*b){1000}|…`, 1,199 characters sent by a client, compiled
 * to 500,000 instructions in 0.9 s. RE2 itself refuses patterns over its memory budget in the same way. Real patterns
 * are far below (`(.*a){1000}` is 5,000).
 */
const MAX_PROGRAM_SIZE = 20_000;

/** .NET group number → RE2 group index, plus names. .NET numbers unnamed groups first, then named ones. */
export interface GroupTable {
  /** Indexed by .NET group number; the RE2 capture index to read. */
  readonly re2Index: readonly number[];
  /** Indexed by .NET group number: the group's name ("0", "1", … for unnamed groups). */
  readonly names: readonly string[];
  readonly byName: ReadonlyMap<string, number>;
}

interface Translation {
  readonly source: string;
  readonly flags: number;
  readonly groups: GroupTable;
}

class Translator {
  private i = 0;
  private out = '';
  private readonly scopes: Scope[];
  /** Capturing groups in RE2 order (order of their opening parenthesis): name or null. */
  private readonly captures: (string | null)[] = [];
  private readonly ecmaScript: boolean;

  constructor(
    private readonly p: string,
    options: number,
  ) {
    this.scopes = [
      {
        explicitCapture: (options & EXPLICIT_CAPTURE) !== 0,
        ignoreWhitespace: (options & IGNORE_PATTERN_WHITESPACE) !== 0,
        size: 0,
        last: 0,
      },
    ];
    this.ecmaScript = (options & ECMASCRIPT) !== 0;
  }

  private get scope(): Scope {
    return this.scopes[this.scopes.length - 1]!;
  }

  private refuse([what, why]: readonly [string, string], at: number, found: string): never {
    throw new RegexRefusal(`${what} '${found}' at offset ${at} ${why}`);
  }

  private invalid(reason: string, at: number): never {
    throw new RegexRefusal(`invalid pattern: ${reason} at offset ${at}`);
  }

  /** An atom of `size` instructions was added to the current group. */
  private atom(size: number): void {
    this.scope.size += size;
    this.scope.last = size;
  }

  translate(): { source: string; captures: (string | null)[]; size: number } {
    const p = this.p;
    while (this.i < p.length) {
      const c = p[this.i]!;
      if (this.scope.ignoreWhitespace && /\s/.test(c)) {
        this.i++;
        continue;
      }
      if (this.scope.ignoreWhitespace && c === '#') {
        const nl = p.indexOf('\n', this.i);
        this.i = nl < 0 ? p.length : nl + 1;
        continue;
      }
      switch (c) {
        case '\\':
          this.out += this.escape(false);
          this.atom(1);
          break;
        case '[':
          this.characterClass();
          this.atom(1);
          break;
        case '(':
          this.openGroup();
          break;
        case ')':
          if (this.scopes.length === 1) this.invalid('too many )', this.i);
          // The group's contents, and its two capture instructions.
          this.atom(this.scopes.pop()!.size + 2);
          this.out += ')';
          this.i++;
          break;
        case '*':
        case '+':
        case '?':
          this.quantifier(1);
          break;
        case '{': {
          const q = /^\{\d+(,\d*)?\}/.exec(p.slice(this.i, this.i + 24));
          if (q) this.quantifier(q[0].length);
          else {
            this.out += '\\{';
            this.i++;
            this.atom(1);
          }
          break;
        }
        case '}':
        case ']':
          this.out += `\\${c}`;
          this.i++;
          this.atom(1);
          break;
        case '|':
          this.out += c;
          this.i++;
          this.scope.size += 1;
          this.scope.last = 0;
          break;
        default:
          this.out += c;
          this.i++;
          this.atom(1);
      }
    }
    if (this.scopes.length > 1) this.invalid('not enough )', p.length);
    return { source: this.out, captures: this.captures, size: this.scope.size };
  }

  /** A quantifier of `length` characters at i, an optional lazy `?`, and no possessive `+` after it. */
  private quantifier(length: number): void {
    const p = this.p;
    const text = p.slice(this.i, this.i + length);
    // x* x+ x? add one instruction; x{n} is n copies of x, x{n,m} m copies (the last m-n optional, one more
    // instruction each), x{n,} n copies and a loop.
    const counted = /^\{(\d+)(,(\d*))?\}$/.exec(text);
    const copies = !counted ? 1 : counted[2] === undefined ? +counted[1]! : +(counted[3] || +counted[1]! + 1);
    const atom = this.scope.last;
    this.scope.size += atom * (copies - 1) + copies;
    this.scope.last = atom * copies + copies;
    this.out += text;
    this.i += length;
    if (p[this.i] === '?') {
      this.out += '?';
      this.i++;
    }
    if (p[this.i] === '+') this.refuse(REFUSED.possessive, this.i - 1, p.slice(this.i - 1, this.i + 1));
  }

  /** An escape at i (the backslash); returns its RE2 spelling. */
  private escape(inClass: boolean): string {
    const p = this.p;
    const at = this.i;
    const d = p[at + 1];
    if (d === undefined) this.invalid('illegal \\ at end of pattern', at);
    this.i = at + 2;
    const shorthand = SHORTHANDS[d];
    if (shorthand) {
      if (this.ecmaScript) return `\\${d}`;
      return inClass ? shorthand.inside() : shorthand.outside;
    }
    if (d === 'b' && inClass) return '\\x{8}';
    if (!inClass && ANCHOR_ESCAPES[d]) return ANCHOR_ESCAPES[d];
    const character = CHARACTER_ESCAPES[d];
    if (character) return character;
    if (d === 'G') this.refuse(REFUSED.contiguous, at, '\\G');
    if (d >= '1' && d <= '9') this.refuse(REFUSED.backreference, at, p.slice(at, at + 2));
    if (d === 'k' && (p[at + 2] === '<' || p[at + 2] === "'")) {
      const close = p.indexOf(p[at + 2] === '<' ? '>' : "'", at + 3);
      this.refuse(REFUSED.backreference, at, p.slice(at, close < 0 ? at + 3 : close + 1));
    }
    if (d === '0') {
      const oct = /^[0-7]{0,2}/.exec(p.slice(at + 2, at + 4))![0];
      this.i += oct.length;
      return hex(Number.parseInt(`0${oct}`, 8));
    }
    if (d === 'x' || d === 'u') {
      const width = d === 'x' ? 2 : 4;
      const digits = p.slice(at + 2, at + 2 + width);
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`).test(digits)) {
        this.invalid(`insufficient hexadecimal digits after '\\${d}'`, at);
      }
      this.i += width;
      return hex(Number.parseInt(digits, 16));
    }
    if (d === 'c') {
      const letter = p[at + 2];
      if (letter === undefined || !/[A-Za-z@[\\\]^_]/.test(letter))
        this.invalid('invalid control character after \\c', at);
      this.i++;
      return hex(letter.toUpperCase().charCodeAt(0) & 31);
    }
    if (d === 'p' || d === 'P') {
      const m = /^\{([A-Za-z0-9_-]+)\}/.exec(p.slice(at + 2, at + 64));
      if (!m) this.invalid(`malformed \\${d}{X} character escape`, at);
      if (m[1]!.startsWith('Is')) this.refuse(REFUSED.block, at, p.slice(at, at + 2 + m[0].length));
      this.i += m[0].length;
      return `\\${d}{${m[1]}}`;
    }
    const cp = p.codePointAt(at + 1)!;
    const ch = String.fromCodePoint(cp);
    this.i = at + 1 + ch.length;
    if (ASCII_PUNCTUATION.test(ch)) return `\\${ch}`;
    if (/[\p{L}\p{N}_]/u.test(ch)) this.invalid(`unrecognized escape sequence '\\${ch}'`, at);
    // Escaped white space, controls and non-ASCII symbols stand for themselves.
    return hex(cp);
  }

  /** [...] with .NET's rules: a `]` first is literal, `-[...]` is subtraction, `[` is literal. */
  private characterClass(): void {
    const p = this.p;
    const start = this.i;
    this.out += '[';
    this.i++;
    if (p[this.i] === '^') {
      this.out += '^';
      this.i++;
    }
    let first = true;
    for (;;) {
      if (this.i >= p.length) this.invalid('unterminated [] set', start);
      const c = p[this.i]!;
      if (c === ']' && !first) {
        this.out += ']';
        this.i++;
        return;
      }
      first = false;
      if (c === '-' && p[this.i + 1] === '[') this.refuse(REFUSED.subtraction, this.i, '-[');
      if (c === '\\') {
        this.out += this.escape(true);
        continue;
      }
      this.out += c === '[' || c === ']' ? `\\${c}` : c;
      this.i++;
    }
  }

  /** `(` at i: every .NET grouping construct, translated or refused. */
  private openGroup(): void {
    const p = this.p;
    const at = this.i;
    const inherited = { ...this.scope, size: 0, last: 0 };
    if (p[at + 1] !== '?') {
      this.i++;
      this.scopes.push(inherited);
      if (inherited.explicitCapture) this.out += '(?:';
      else {
        this.captures.push(null);
        this.out += '(';
      }
      return;
    }
    const rest = p.slice(at + 2, at + 3);
    const two = p.slice(at, at + 4);
    if (rest === ':') {
      this.i = at + 3;
      this.scopes.push(inherited);
      this.out += '(?:';
      return;
    }
    if (rest === '#') {
      const close = p.indexOf(')', at);
      if (close < 0) this.invalid('unterminated (?#...) comment', at);
      this.i = close + 1;
      return;
    }
    if (rest === '=' || rest === '!') this.refuse(REFUSED.lookahead, at, p.slice(at, at + 3));
    if (two === '(?<=' || two === '(?<!') this.refuse(REFUSED.lookbehind, at, two);
    if (rest === '>') this.refuse(REFUSED.atomic, at, '(?>');
    if (rest === '(') this.refuse(REFUSED.conditional, at, '(?(');
    if (rest === '<' || rest === "'") {
      const close = p.indexOf(rest === '<' ? '>' : "'", at + 3);
      if (close < 0) this.invalid('unterminated group name', at);
      const name = p.slice(at + 3, close);
      if (name.includes('-')) this.refuse(REFUSED.balancing, at, p.slice(at, close + 1));
      if (/^\d+$/.test(name)) this.refuse(REFUSED.numberedName, at, p.slice(at, close + 1));
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) this.invalid(`invalid group name '${name}'`, at);
      if (this.captures.includes(name)) this.refuse(REFUSED.duplicateName, at, p.slice(at, close + 1));
      this.i = close + 1;
      this.scopes.push(inherited);
      this.captures.push(name);
      this.out += `(?P<${name}>`;
      return;
    }
    const flags = /^([imnsx]*)(?:-([imnsx]*))?([:)])/.exec(p.slice(at + 2, at + 24));
    if (!flags) this.invalid('unrecognized grouping construct', at);
    const [whole, on = '', off = '', end] = flags;
    this.i = at + 2 + whole.length;
    const target = end === ':' ? inherited : this.scope;
    for (const [letters, value] of [
      [on, true],
      [off, false],
    ] as const) {
      if (letters.includes('n')) target.explicitCapture = value;
      if (letters.includes('x')) target.ignoreWhitespace = value;
    }
    // i, m and s mean the same in RE2; n and x were applied to the scope above.
    const re2On = on.replace(/[nx]/g, '');
    const re2Off = off.replace(/[nx]/g, '');
    const re2Flags = re2On + (re2Off ? `-${re2Off}` : '');
    if (end === ':') {
      this.scopes.push(inherited);
      this.out += re2Flags ? `(?${re2Flags}:` : '(?:';
    } else if (re2Flags) this.out += `(?${re2Flags})`;
  }
}

/** Numbering as .NET does it: unnamed groups 1…u in order, then named groups u+1… in order of appearance. */
function groupTable(captures: readonly (string | null)[]): GroupTable {
  const re2Index = [0];
  const names = ['0'];
  captures.forEach((name, k) => {
    if (name === null) {
      re2Index.push(k + 1);
      names.push(String(names.length));
    }
  });
  const byName = new Map<string, number>();
  captures.forEach((name, k) => {
    if (name !== null) {
      byName.set(name, re2Index.length);
      re2Index.push(k + 1);
      names.push(name);
    }
  });
  for (let n = 0; n < names.length; n++) if (!byName.has(names[n]!)) byName.set(names[n]!, n);
  return { re2Index, names, byName };
}

/** Translates a .NET pattern with its RegexOptions to RE2 source and flags, or throws RegexRefusal. */
export function translatePattern(pattern: string, options: number): Translation {
  if (options & RIGHT_TO_LEFT) throw new RegexRefusal('RegexOptions.RightToLeft is not supported');
  const { source, captures, size } = new Translator(pattern, options).translate();
  if (size > MAX_PROGRAM_SIZE) {
    throw new RegexRefusal(
      `it would compile to about ${size.toLocaleString('en-US')} instructions, more than the ` +
        `${MAX_PROGRAM_SIZE.toLocaleString('en-US')} a pattern may have (a counted repetition copies what it repeats)`,
    );
  }
  let flags = 0;
  if (options & IGNORE_CASE) flags |= RE2JS.CASE_INSENSITIVE;
  if (options & MULTILINE) flags |= RE2JS.MULTILINE;
  if (options & SINGLELINE) flags |= RE2JS.DOTALL;
  return { source, flags, groups: groupTable(captures) };
}

interface CompiledPattern {
  readonly re: RE2JS;
  readonly groups: GroupTable;
}

// Literal patterns are compiled once at load; patterns built at run time are cached too, but boundedly (each
// compiled pattern may keep up to RE2's lazy-DFA budget of state).
const MAX_CACHED_PATTERNS = 256;
const patternCache = new Map<string, CompiledPattern>();

const quoted = (pattern: string): string =>
  JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 77)}...` : pattern);

/** Translates and compiles (cached), or throws RegexRefusal naming the pattern, the construct and where it is. */
export function compilePattern(pattern: string, options: number): CompiledPattern {
  const key = `${options}/${pattern}`;
  const cached = patternCache.get(key);
  if (cached) return cached;
  let compiled: CompiledPattern;
  try {
    const t = translatePattern(pattern, options);
    compiled = { re: compileBounded(t.source, t.flags), groups: t.groups };
  } catch (e) {
    const reason =
      e instanceof RegexRefusal
        ? e.message
        : e instanceof RE2JSException
          ? `invalid pattern: ${e.message.replace(/^error parsing regexp: /, '')}`
          : null;
    if (reason === null) throw e;
    throw new RegexRefusal(
      `the regular expression ${quoted(pattern)} cannot be used: ${reason} (policy regular expressions run on a linear-time engine with RE2 semantics)`,
    );
  }
  if (patternCache.size >= MAX_CACHED_PATTERNS) patternCache.delete(patternCache.keys().next().value!);
  patternCache.set(key, compiled);
  return compiled;
}

// ---- runtime types ----

export class CsRegex {
  readonly compiled: CompiledPattern;
  constructor(
    readonly pattern: string,
    readonly options: number,
  ) {
    try {
      this.compiled = compilePattern(pattern, options);
    } catch (e) {
      if (e instanceof RegexRefusal) throw argError(e.message);
      throw e;
    }
  }
}

/** One match: the input and, per .NET group number, [start, end) (start -1 when the group did not take part). */
export class CsMatch {
  constructor(
    readonly regex: CsRegex | null,
    readonly input: string,
    readonly spans: readonly number[],
  ) {}
  get success(): boolean {
    return this.spans[0]! >= 0;
  }
  group(n: number): CsGroup {
    const name = this.regex?.compiled.groups.names[n] ?? String(n);
    const start = this.spans[2 * n] ?? -1;
    return new CsGroup(this.input, start, start >= 0 ? this.spans[2 * n + 1]! : -1, name);
  }
  get groupCount(): number {
    return this.success ? this.spans.length / 2 : 1;
  }
}

/** One capture of a group. RE2 keeps only the last capture of a repeated group, so a group has at most one. */
export class CsCapture {
  constructor(
    readonly input: string,
    readonly start: number,
    readonly end: number,
  ) {}
  get value(): string {
    return this.input.slice(this.start, this.end);
  }
}

export class CsCaptureCollection {
  constructor(readonly captures: readonly CsCapture[]) {}
}

const capturesOf = (g: CsGroup): CsCaptureCollection =>
  new CsCaptureCollection(g.start >= 0 ? [new CsCapture(g.input, g.start, g.end)] : []);

export class CsGroup {
  constructor(
    readonly input: string,
    readonly start: number,
    readonly end: number,
    readonly name: string,
  ) {}
  get value(): string {
    return this.start >= 0 ? this.input.slice(this.start, this.end) : '';
  }
}

export class CsGroupCollection {
  constructor(readonly match: CsMatch) {}
}

const FAILED_SPANS: readonly number[] = Object.freeze([-1, -1]);

function input(rt: Rt, v: unknown): string {
  const s = str(v, 'input');
  if (s.length > rt.limits.maxRegexInputLength) {
    throw new CsException(
      'RegexMatchTimeoutException',
      `regular expression input of ${s.length} characters exceeds the limit of ${rt.limits.maxRegexInputLength}`,
    );
  }
  return s;
}

function regexArgs(args: unknown[], from: number): CsRegex {
  const opt = args[from + 1];
  return new CsRegex(str(args[from], 'pattern'), opt instanceof CsEnum ? opt.value : NO_OPTIONS);
}

type Re2Matcher = ReturnType<RE2JS['matcher']>;

function spansOf(regex: CsRegex, m: Re2Matcher): number[] {
  const spans: number[] = [];
  for (const k of regex.compiled.groups.re2Index) spans.push(m.start(k), m.end(k));
  return spans;
}

/**
 * One search from `start`, within the evaluation's regex budget (runtime/bounded-search.ts): the match's spans, or
 * null. The spans are read inside the budget too: re2js finds the groups with a second search over the rest of the
 * input. Whether there is a match at all is asked first of the lazy DFA (`matchesFrom`), which is much faster than
 * the Matcher's NFA, so a search that finds nothing (Replace over a body, after its last match) never runs the NFA.
 */
function search(rt: Rt, regex: CsRegex, m: Re2Matcher, s: string, start: number): number[] | null {
  const { re } = regex.compiled;
  return searchWithinBudget(rt, re, regex.pattern, s, start, () =>
    (!dfaFirst(re, s.length - start) || matchesFrom(re, s, start)) && m.find(start)
      ? spansOf(regex, m)
      : null,
  );
}

function checkStart(s: string, start: number): void {
  if (start < 0 || start > s.length) throw argError('startat is out of range', 'ArgumentOutOfRangeException');
}

/** The first match at or after `start`. */
function matchAt(rt: Rt, regex: CsRegex, s: string, start: number): CsMatch {
  checkStart(s, start);
  return new CsMatch(regex, s, search(rt, regex, regex.compiled.re.matcher(s), s, start) ?? FAILED_SPANS);
}

/** Whether there is a match at or after `start`: IsMatch needs no groups, so only the DFA runs. */
function isMatchAt(rt: Rt, regex: CsRegex, s: string, start: number): boolean {
  checkStart(s, start);
  const { re } = regex.compiled;
  return searchWithinBudget(rt, re, regex.pattern, s, start, () =>
    matchesFrom(re, s, start, () => re.matcher(s).find(start)),
  );
}

/** Where the search after a match resumes: .NET steps one character past an empty match (a whole surrogate pair). */
function nextStart(s: string, start: number, end: number): number {
  if (end > start) return end;
  const c = s.charCodeAt(end);
  return end + (c >= 0xd800 && c <= 0xdbff && end + 1 < s.length ? 2 : 1);
}

/** Successive matches as .NET finds them; at most maxCollectionSize matches, each search within the budget. */
function* scan(rt: Rt, regex: CsRegex, s: string, start = 0): Generator<CsMatch> {
  const m = regex.compiled.re.matcher(s);
  let pos = start;
  let count = 0;
  while (pos <= s.length) {
    const spans = search(rt, regex, m, s, pos);
    if (spans === null) return;
    checkSize(rt, ++count);
    yield new CsMatch(regex, s, spans);
    pos = nextStart(s, spans[0]!, spans[1]!);
  }
}

// ---- Replace ----

const WHOLE_INPUT = -1;
const BEFORE_MATCH = -2;
const AFTER_MATCH = -3;
const LAST_GROUP = -4;
/** A replacement pattern: literal text, or a .NET group number / one of the special references above. */
type Substitution = (string | number)[];

/** .NET substitution syntax: $n (all digits, when they name a group), ${name}, $$, $&, $`, $', $+, $_. */
function parseSubstitution(rep: string, groups: GroupTable): Substitution {
  const parts: Substitution = [];
  let text = '';
  const ref = (r: number): void => {
    if (text) parts.push(text);
    text = '';
    parts.push(r);
  };
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i]!;
    const d = rep[i + 1];
    if (c !== '$' || d === undefined) {
      text += c;
      continue;
    }
    const special = { $: '$', '&': 0, '`': BEFORE_MATCH, "'": AFTER_MATCH, '+': LAST_GROUP, _: WHOLE_INPUT }[
      d
    ];
    if (special !== undefined) {
      if (typeof special === 'string') text += special;
      else ref(special);
      i++;
      continue;
    }
    const digits = /^\d+/.exec(rep.slice(i + 1))?.[0];
    if (digits && Number(digits) < groups.names.length) {
      ref(Number(digits));
      i += digits.length;
      continue;
    }
    const braced = d === '{' ? /^\{(\w+)\}/.exec(rep.slice(i + 1)) : null;
    const n = braced ? groupNumber(groups, braced[1]!) : -1;
    if (braced && n >= 0) {
      ref(n);
      i += braced[0].length;
      continue;
    }
    text += '$';
  }
  if (text) parts.push(text);
  return parts;
}

function groupNumber(groups: GroupTable, key: string): number {
  const named = groups.byName.get(key);
  if (named !== undefined) return named;
  if (/^\d+$/.test(key) && Number(key) < groups.names.length) return Number(key);
  return -1;
}

function substitute(match: CsMatch, parts: Substitution): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else if (part >= 0) out += match.group(part).value;
    else if (part === WHOLE_INPUT) out += match.input;
    else if (part === BEFORE_MATCH) out += match.input.slice(0, match.spans[0]);
    else if (part === AFTER_MATCH) out += match.input.slice(match.spans[1]);
    else out += match.group(match.groupCount - 1).value;
  }
  return out;
}

/**
 * Regex.Replace: `replacement` is a .NET substitution pattern or a MatchEvaluator. The result's size is counted as it
 * grows, so the limit is raised before a string over maxStringLength is ever built.
 */
function replace(rt: Rt, regex: CsRegex, s: string, replacement: unknown, count = -1, startat = 0): string {
  const evaluator = typeof replacement === 'function' ? (replacement as (m: CsMatch) => unknown) : null;
  const parts = evaluator ? null : parseSubstitution(str(replacement, 'replacement'), regex.compiled.groups);
  const pieces: string[] = [];
  let length = 0;
  const append = (piece: string): void => {
    length += piece.length;
    checkStringLength(rt, length);
    pieces.push(piece);
  };
  let last = 0;
  let done = 0;
  for (const m of scan(rt, regex, s, startat)) {
    if (count >= 0 && done++ >= count) break;
    append(s.slice(last, m.spans[0]));
    append(evaluator ? toDotNetStringRt(rt, evaluator(m)) : substitute(m, parts!));
    last = m.spans[1]!;
  }
  if (last === 0 && pieces.length === 0) return s;
  append(s.slice(last));
  return pieces.join('');
}

/** Regex.Split: the pieces between matches, with the text of every group that took part inserted after each. */
function split(rt: Rt, regex: CsRegex, s: string, count = 0): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of scan(rt, regex, s)) {
    if (count > 0 && out.length >= count - 1) break;
    out.push(s.slice(last, m.spans[0]));
    for (let g = 1; g < m.groupCount; g++) {
      const group = m.group(g);
      if (group.start >= 0) out.push(group.value);
    }
    checkSize(rt, out.length);
    last = m.spans[1]!;
  }
  out.push(s.slice(last));
  return out;
}

// ---- constant-argument checks: literal patterns are refused when the policy loads ----

/** Checks `args[patternAt]` when it is a literal, with the options at `optionsAt` when those are constant too. */
const literalPattern =
  (patternAt: number, optionsAt: number): ConstantArgsCheck =>
  (args) => {
    const pattern = args[patternAt];
    const options = args[optionsAt];
    if (typeof pattern !== 'string' || options === UNKNOWN_ARG) return;
    if (options !== undefined && !(options instanceof CsEnum)) return;
    try {
      compilePattern(pattern, options?.value ?? NO_OPTIONS);
    } catch (e) {
      if (e instanceof RegexRefusal) throw new ArgumentRefusal(e.message, patternAt);
      throw e;
    }
  };

export const RegexType = defineType({
  name: 'Regex',
  namespace: 'System.Text.RegularExpressions',
  classes: [CsRegex],
  construct: (_rt, args) => regexArgs(args, 0),
  constantArgChecks: {
    new: literalPattern(0, 1),
    IsMatch: literalPattern(1, 2),
    Match: literalPattern(1, 2),
    Matches: literalPattern(1, 2),
    Replace: literalPattern(1, 3),
    Split: literalPattern(1, 2),
  },
  props: {
    Options: prop((r: CsRegex) => new CsEnum('RegexOptions', r.options, RegexOptionsEnum.names)),
  },
  methods: {
    IsMatch: (rt, r: CsRegex, args) =>
      isMatchAt(rt, r, input(rt, args[0]), args[1] === undefined ? 0 : int(args[1])),
    Match: (rt, r: CsRegex, args) =>
      matchAt(rt, r, input(rt, args[0]), args[1] === undefined ? 0 : int(args[1])),
    Matches: (rt, r: CsRegex, args) => [
      ...scan(rt, r, input(rt, args[0]), args[1] === undefined ? 0 : int(args[1])),
    ],
    Replace: (rt, r: CsRegex, args) =>
      replace(
        rt,
        r,
        input(rt, args[0]),
        args[1],
        args[2] === undefined ? -1 : int(args[2]),
        args[3] === undefined ? 0 : int(args[3]),
      ),
    Split: (rt, r: CsRegex, args) =>
      split(rt, r, input(rt, args[0]), args[1] === undefined ? 0 : int(args[1])),
    GetGroupNames: (_rt, r: CsRegex) => [...r.compiled.groups.names],
    GetGroupNumbers: (_rt, r: CsRegex) => r.compiled.groups.names.map((_n, k) => k),
    GroupNumberFromName: (_rt, r: CsRegex, args) => groupNumber(r.compiled.groups, str(args[0], 'name')),
    ToString: (_rt, r: CsRegex) => r.pattern,
  },
  staticMethods: {
    IsMatch: (rt, _s, args) => isMatchAt(rt, regexArgs(args, 1), input(rt, args[0]), 0),
    Match: (rt, _s, args) => matchAt(rt, regexArgs(args, 1), input(rt, args[0]), 0),
    Matches: (rt, _s, args) => [...scan(rt, regexArgs(args, 1), input(rt, args[0]))],
    Replace: (rt, _s, args) => {
      const opt = args[3] instanceof CsEnum ? args[3].value : NO_OPTIONS;
      return replace(rt, new CsRegex(str(args[1], 'pattern'), opt), input(rt, args[0]), args[2]);
    },
    Split: (rt, _s, args) => split(rt, regexArgs(args, 1), input(rt, args[0])),
    Escape: (_rt, _s, args) =>
      str(args[0]).replace(/[\\*+?|{[()^$.#\s]/g, (c) =>
        c === ' ' ? '\\ ' : c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\${c}`,
      ),
    Unescape: (_rt, _s, args) => str(args[0]).replace(/\\(.)/g, '$1'),
  },
});

const groupOf = (m: CsMatch, key: unknown): CsGroup => {
  if (typeof key === 'number') return m.group(key);
  const n = m.regex ? groupNumber(m.regex.compiled.groups, str(key, 'groupname')) : -1;
  return n >= 0 ? m.group(n) : new CsGroup(m.input, -1, -1, str(key));
};

/** Capture ← Group ← Match, as in .NET: a group or a match is also a capture. */
export const CaptureType = defineType({
  name: 'Capture',
  namespace: 'System.Text.RegularExpressions',
  classes: [CsCapture],
  test: (v) => v instanceof CsCapture || v instanceof CsGroup || v instanceof CsMatch,
  props: {
    Value: prop((c: CsCapture) => c.value),
    Index: prop((c: CsCapture) => c.start),
    Length: prop((c: CsCapture) => c.end - c.start),
  },
  methods: { ToString: (_rt, c: CsCapture) => c.value },
});

export const CaptureCollectionType = defineType({
  name: 'CaptureCollection',
  namespace: 'System.Text.RegularExpressions',
  classes: [CsCaptureCollection],
  props: { Count: prop((c: CsCaptureCollection) => c.captures.length) },
  indexer: {
    get: (_rt, c: CsCaptureCollection, args) => {
      const i = int(args[0]);
      const capture = c.captures[i];
      if (!capture)
        throw argError(
          "Specified argument was out of the range of valid values. (Parameter 'i')",
          'ArgumentOutOfRangeException',
        );
      return capture;
    },
  },
  enumerate: (c: CsCaptureCollection) => c.captures,
});

export const GroupType = defineType({
  name: 'Group',
  namespace: 'System.Text.RegularExpressions',
  base: CaptureType,
  classes: [CsGroup],
  test: (v) => v instanceof CsGroup || v instanceof CsMatch,
  props: {
    Success: prop((g: CsGroup) => g.start >= 0),
    Value: prop((g: CsGroup) => g.value),
    Index: prop((g: CsGroup) => Math.max(0, g.start)),
    Length: prop((g: CsGroup) => g.value.length),
    Name: prop((g: CsGroup) => g.name),
    Captures: prop((g: CsGroup) => capturesOf(g)),
  },
  methods: { ToString: (_rt, g: CsGroup) => g.value },
});

/** Match.Empty: the failed match .NET returns where no search ran. */
const EMPTY_MATCH = new CsMatch(null, '', FAILED_SPANS);

export const MatchType = defineType({
  name: 'Match',
  namespace: 'System.Text.RegularExpressions',
  base: GroupType,
  classes: [CsMatch],
  props: {
    Success: prop((m: CsMatch) => m.success),
    Value: prop((m: CsMatch) => m.group(0).value),
    Index: prop((m: CsMatch) => Math.max(0, m.spans[0]!)),
    Length: prop((m: CsMatch) => m.group(0).value.length),
    Name: prop(() => '0'),
    Groups: prop((m: CsMatch) => new CsGroupCollection(m)),
    Captures: prop((m: CsMatch) => capturesOf(m.group(0))),
  },
  staticProps: { Empty: prop(() => EMPTY_MATCH) },
  methods: {
    ToString: (_rt, m: CsMatch) => m.group(0).value,
    NextMatch: (rt, m: CsMatch) => {
      if (!m.success || !m.regex) return new CsMatch(m.regex, m.input, FAILED_SPANS);
      const next = nextStart(m.input, m.spans[0]!, m.spans[1]!);
      return next > m.input.length
        ? new CsMatch(m.regex, m.input, FAILED_SPANS)
        : matchAt(rt, m.regex, m.input, next);
    },
    Result: (rt, m: CsMatch, args) => {
      if (!m.success || !m.regex) throw new CsException('NotSupportedException', 'the match did not succeed');
      const out = substitute(m, parseSubstitution(str(args[0], 'replacement'), m.regex.compiled.groups));
      checkStringLength(rt, out.length);
      return out;
    },
  },
});

export const GroupCollectionType = defineType({
  name: 'GroupCollection',
  namespace: 'System.Text.RegularExpressions',
  classes: [CsGroupCollection],
  props: { Count: prop((g: CsGroupCollection) => g.match.groupCount) },
  indexer: { get: (_rt, g: CsGroupCollection, args) => groupOf(g.match, args[0]) },
  methods: {
    ContainsKey: (_rt, g: CsGroupCollection, args) =>
      g.match.regex !== null && groupNumber(g.match.regex.compiled.groups, str(args[0], 'key')) >= 0,
  },
  enumerate: (g: CsGroupCollection) =>
    Array.from({ length: g.match.groupCount }, (_v, k) => g.match.group(k)),
});
