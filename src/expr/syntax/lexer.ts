/**
 * C# tokenizer for policy expressions. Interpolated strings are lexed into literal parts and the source ranges of
 * their holes; the parser parses each hole with the same token stream machinery so positions stay exact.
 */

export type TokenKind = 'ident' | 'keyword' | 'number' | 'string' | 'char' | 'interp' | 'punct' | 'eof';

export interface InterpHole {
  /** Offsets of the hole's expression text in the whole source. */
  start: number;
  end: number;
  /** `{x,10}` alignment and `{x:yyyy-MM-dd}` format. */
  alignment: string | undefined;
  format: string | undefined;
}

export interface Token {
  kind: TokenKind;
  /** Identifier name, keyword, punctuator, decoded string/char value, or number text. */
  value: string;
  start: number;
  end: number;
  /** Numeric literal suffix, lower-cased ('', 'l', 'u', 'ul', 'f', 'd', 'm'); `isReal` when it had . or e. */
  suffix?: string;
  isReal?: boolean;
  /** Interpolated string: literal parts around the holes (parts.length === holes.length + 1). */
  parts?: string[];
  holes?: InterpHole[];
}

export class LexError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
  }
}

export const KEYWORDS = new Set([
  'as',
  'base',
  'bool',
  'break',
  'byte',
  'case',
  'catch',
  'char',
  'checked',
  'class',
  'const',
  'continue',
  'decimal',
  'default',
  'do',
  'double',
  'else',
  'enum',
  'false',
  'finally',
  'float',
  'for',
  'foreach',
  'goto',
  'if',
  'in',
  'int',
  'is',
  'long',
  'new',
  'null',
  'object',
  'out',
  'ref',
  'return',
  'sbyte',
  'short',
  'sizeof',
  'static',
  'string',
  'switch',
  'this',
  'throw',
  'true',
  'try',
  'typeof',
  'uint',
  'ulong',
  'unchecked',
  'ushort',
  'var',
  'void',
  'while',
  'lock',
  'unsafe',
  'fixed',
  'stackalloc',
  'delegate',
  'event',
  'operator',
  'implicit',
  'explicit',
  'abstract',
  'override',
  'virtual',
  'sealed',
  'extern',
  'volatile',
  'internal',
  'private',
  'protected',
  'public',
  'readonly',
  'struct',
  'interface',
  'namespace',
  'using',
  'params',
]);

// Longest first: the lexer takes the first that matches.
const PUNCTUATORS = [
  '??=',
  '<<=',
  '=>',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '?.',
  '?[',
  '??',
  '<<',
  '::',
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ';',
  ',',
  '.',
  ':',
  '?',
  '+',
  '-',
  '*',
  '/',
  '%',
  '&',
  '|',
  '^',
  '!',
  '~',
  '=',
  '<',
  '>',
];

const isIdentStart = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127;
const isIdentPart = (c: number): boolean => isIdentStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

export function tokenize(src: string, from = 0, to = src.length): Token[] {
  const tokens: Token[] = [];
  let i = from;
  while (true) {
    i = skipTrivia(src, i, to);
    if (i >= to) break;
    const c = src.charCodeAt(i);
    const start = i;
    // Verbatim / interpolated string prefixes: @"  $"  $@"  @$"
    if (c === 64 /* @ */ || c === 36 /* $ */) {
      const n1 = src[i + 1];
      const n2 = src[i + 2];
      if (c === 64 && n1 === '"') {
        const r = readVerbatim(src, i + 2, to);
        tokens.push({ kind: 'string', value: r.value, start, end: r.end });
        i = r.end;
        continue;
      }
      if (c === 36 && n1 === '"') {
        const r = readInterpolated(src, i + 2, to, false);
        tokens.push({ kind: 'interp', value: '', start, end: r.end, parts: r.parts, holes: r.holes });
        i = r.end;
        continue;
      }
      if ((c === 36 && n1 === '@' && n2 === '"') || (c === 64 && n1 === '$' && n2 === '"')) {
        const r = readInterpolated(src, i + 3, to, true);
        tokens.push({ kind: 'interp', value: '', start, end: r.end, parts: r.parts, holes: r.holes });
        i = r.end;
        continue;
      }
      if (c === 64 && n1 !== undefined && isIdentStart(n1.charCodeAt(0))) {
        // @identifier: a keyword used as a name.
        let j = i + 1;
        while (j < to && isIdentPart(src.charCodeAt(j))) j++;
        tokens.push({ kind: 'ident', value: src.slice(i + 1, j), start, end: j });
        i = j;
        continue;
      }
      throw new LexError(`unexpected character '${src[i]}'`, i);
    }
    if (isIdentStart(c)) {
      let j = i + 1;
      while (j < to && isIdentPart(src.charCodeAt(j))) j++;
      const word = src.slice(i, j);
      tokens.push({ kind: KEYWORDS.has(word) ? 'keyword' : 'ident', value: word, start, end: j });
      i = j;
      continue;
    }
    if (isDigit(c) || (c === 46 && isDigit(src.charCodeAt(i + 1)))) {
      const t = readNumber(src, i, to);
      tokens.push(t);
      i = t.end;
      continue;
    }
    if (c === 34 /* " */) {
      const r = readRegular(src, i + 1, to, '"');
      tokens.push({ kind: 'string', value: r.value, start, end: r.end });
      i = r.end;
      continue;
    }
    if (c === 39 /* ' */) {
      const r = readRegular(src, i + 1, to, "'");
      if (r.value.length !== 1)
        throw new LexError(`a char literal holds exactly one character, got '${r.value}'`, i);
      tokens.push({ kind: 'char', value: r.value, start, end: r.end });
      i = r.end;
      continue;
    }
    const p = PUNCTUATORS.find((op) => src.startsWith(op, i));
    if (p === undefined || i + p.length > to) throw new LexError(`unexpected character '${src[i]}'`, i);
    // `a?.5:1` is a conditional with a numeric literal, not a null-conditional access.
    if (p === '?.' && isDigit(src.charCodeAt(i + 2))) {
      tokens.push({ kind: 'punct', value: '?', start, end: i + 1 });
      i += 1;
      continue;
    }
    tokens.push({ kind: 'punct', value: p, start, end: i + p.length });
    i += p.length;
  }
  tokens.push({ kind: 'eof', value: '', start: to, end: to });
  return tokens;
}

function skipTrivia(src: string, i: number, to: number): number {
  while (i < to) {
    const c = src.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10 || c === 13 || c === 0xa0 || c === 0xfeff) {
      i++;
    } else if (c === 47 && src.charCodeAt(i + 1) === 47) {
      while (i < to && src.charCodeAt(i) !== 10) i++;
    } else if (c === 47 && src.charCodeAt(i + 1) === 42) {
      const end = src.indexOf('*/', i + 2);
      if (end < 0 || end + 2 > to) throw new LexError('unterminated /* comment', i);
      i = end + 2;
    } else {
      break;
    }
  }
  return i;
}

function readNumber(src: string, i: number, to: number): Token {
  const start = i;
  let isReal = false;
  let text: string;
  if (src[i] === '0' && (src[i + 1] === 'x' || src[i + 1] === 'X')) {
    let j = i + 2;
    while (j < to && /[0-9a-fA-F_]/.test(src[j]!)) j++;
    if (j === i + 2 || src[j - 1] === '_') throw new LexError('invalid hexadecimal literal', start);
    text = `0x${src.slice(i + 2, j).replace(/_/g, '')}`;
    i = j;
  } else {
    let j = i;
    while (j < to && (isDigit(src.charCodeAt(j)) || src[j] === '_')) j++;
    if (src[j] === '.' && isDigit(src.charCodeAt(j + 1))) {
      isReal = true;
      j++;
      while (j < to && (isDigit(src.charCodeAt(j)) || src[j] === '_')) j++;
    }
    if (src[j] === 'e' || src[j] === 'E') {
      let k = j + 1;
      if (src[k] === '+' || src[k] === '-') k++;
      if (isDigit(src.charCodeAt(k))) {
        isReal = true;
        j = k;
        while (j < to && isDigit(src.charCodeAt(j))) j++;
      }
    }
    text = src.slice(i, j).replace(/_/g, '');
    i = j;
  }
  let suffix = '';
  const m = /^(ul|lu|u|l|f|d|m)/i.exec(src.slice(i, Math.min(i + 2, to)));
  if (m) {
    suffix = m[1]!.toLowerCase();
    if (suffix === 'lu') suffix = 'ul';
    i += m[1]!.length;
  }
  if (i < to && isIdentPart(src.charCodeAt(i))) {
    throw new LexError(`invalid numeric literal '${src.slice(start, i + 1)}'`, start);
  }
  return { kind: 'number', value: text, start, end: i, suffix, isReal };
}

function readEscape(src: string, i: number): { ch: string; next: number } {
  const e = src[i];
  switch (e) {
    case 'n':
      return { ch: '\n', next: i + 1 };
    case 'r':
      return { ch: '\r', next: i + 1 };
    case 't':
      return { ch: '\t', next: i + 1 };
    case '0':
      return { ch: '\0', next: i + 1 };
    case 'a':
      return { ch: '\x07', next: i + 1 };
    case 'b':
      return { ch: '\b', next: i + 1 };
    case 'f':
      return { ch: '\f', next: i + 1 };
    case 'v':
      return { ch: '\v', next: i + 1 };
    case '\\':
    case '"':
    case "'":
      return { ch: e, next: i + 1 };
    case 'u': {
      const hex = src.slice(i + 1, i + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new LexError(`invalid \\u escape '\\u${hex}'`, i - 1);
      return { ch: String.fromCharCode(Number.parseInt(hex, 16)), next: i + 5 };
    }
    case 'x': {
      const m = /^[0-9a-fA-F]{1,4}/.exec(src.slice(i + 1, i + 5));
      if (!m) throw new LexError('invalid \\x escape', i - 1);
      return { ch: String.fromCharCode(Number.parseInt(m[0], 16)), next: i + 1 + m[0].length };
    }
    default:
      throw new LexError(`unrecognized escape sequence '\\${e ?? ''}'`, i - 1);
  }
}

function readRegular(src: string, i: number, to: number, quote: string): { value: string; end: number } {
  let out = '';
  const open = i - 1;
  while (i < to) {
    const ch = src[i]!;
    if (ch === quote) return { value: out, end: i + 1 };
    if (ch === '\n') break;
    if (ch === '\\') {
      const r = readEscape(src, i + 1);
      out += r.ch;
      i = r.next;
    } else {
      out += ch;
      i++;
    }
  }
  throw new LexError(quote === '"' ? 'unterminated string literal' : 'unterminated char literal', open);
}

function readVerbatim(src: string, i: number, to: number): { value: string; end: number } {
  let out = '';
  const open = i - 2;
  while (i < to) {
    const ch = src[i]!;
    if (ch === '"') {
      if (src[i + 1] === '"') {
        out += '"';
        i += 2;
        continue;
      }
      return { value: out, end: i + 1 };
    }
    out += ch;
    i++;
  }
  throw new LexError('unterminated verbatim string literal', open);
}

/** Finds the end of a hole expression: the first `}` / top-level `,` or `:` not inside brackets, strings or chars. */
function scanHole(src: string, i: number, to: number): { exprEnd: number; stop: string } {
  let depth = 0;
  while (i < to) {
    const ch = src[i]!;
    if (ch === '"' || ch === "'") {
      i = readRegular(src, i + 1, to, ch).end;
      continue;
    }
    if (ch === '@' && src[i + 1] === '"') {
      i = readVerbatim(src, i + 2, to).end;
      continue;
    }
    if (ch === '$' && (src[i + 1] === '"' || (src[i + 1] === '@' && src[i + 2] === '"'))) {
      const verbatim = src[i + 1] === '@';
      i = readInterpolated(src, i + (verbatim ? 3 : 2), to, verbatim).end;
      continue;
    }
    if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']') depth--;
    else if (ch === '}') {
      if (depth === 0) return { exprEnd: i, stop: '}' };
      depth--;
    } else if (depth === 0 && (ch === ',' || ch === ':')) {
      // `a ? b : c` inside a hole must be parenthesised in C#, so a top-level ':' always starts the format.
      // `::` (alias qualifier) does not occur in policies.
      return { exprEnd: i, stop: ch };
    }
    i++;
  }
  throw new LexError('unterminated interpolation hole', i);
}

function readInterpolated(
  src: string,
  i: number,
  to: number,
  verbatim: boolean,
): { parts: string[]; holes: InterpHole[]; end: number } {
  const parts: string[] = [];
  const holes: InterpHole[] = [];
  let cur = '';
  const open = i;
  while (i < to) {
    const ch = src[i]!;
    if (ch === '"') {
      if (verbatim && src[i + 1] === '"') {
        cur += '"';
        i += 2;
        continue;
      }
      parts.push(cur);
      return { parts, holes, end: i + 1 };
    }
    if (ch === '{') {
      if (src[i + 1] === '{') {
        cur += '{';
        i += 2;
        continue;
      }
      parts.push(cur);
      cur = '';
      const start = i + 1;
      let r = scanHole(src, start, to);
      const hole: InterpHole = { start, end: r.exprEnd, alignment: undefined, format: undefined };
      i = r.exprEnd;
      if (r.stop === ',') {
        r = scanHole(src, i + 1, to);
        hole.alignment = src.slice(i + 1, r.exprEnd).trim();
        i = r.exprEnd;
      }
      if (r.stop === ':') {
        const close = src.indexOf('}', i + 1);
        if (close < 0 || close >= to) throw new LexError('unterminated interpolation format', i);
        hole.format = src.slice(i + 1, close);
        i = close;
      }
      holes.push(hole);
      i++; // the closing }
      continue;
    }
    if (ch === '}') {
      if (src[i + 1] === '}') {
        cur += '}';
        i += 2;
        continue;
      }
      throw new LexError("a '}' in an interpolated string must be doubled ('}}')", i);
    }
    if (!verbatim && ch === '\\') {
      const r = readEscape(src, i + 1);
      cur += r.ch;
      i = r.next;
      continue;
    }
    if (!verbatim && ch === '\n') break;
    cur += ch;
    i++;
  }
  throw new LexError('unterminated interpolated string', open - 2);
}
