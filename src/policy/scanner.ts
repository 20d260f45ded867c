/**
 * Finds policy expressions (`@(…)`, `@{…}`) in raw policy text without parsing XML first.
 *
 * Real policies are often not well-formed XML: an expression inside an attribute holds raw `"`, `<` and `&&`
 * (`value="@(ctx.Headers.GetValueOrDefault("a",""))"`), exactly as API Management accepts them. We therefore
 * locate each expression with a scanner that understands enough C# to find its closing bracket — regular,
 * verbatim and interpolated strings, char literals, comments and bracket nesting — and mask it (same length,
 * newlines kept) so saxes can parse the rest. Offsets never move, so positions stay exact.
 *
 * An expression is recognised where API Management evaluates one: at the start of an attribute value or of
 * an element's text (leading whitespace allowed). XML entities inside an expression (`&quot;`, `&lt;`,
 * `&amp;&amp;`) are read as the characters they stand for, because well-formed documents write them that way.
 */

export class ScanError extends Error {
  override readonly name = 'ScanError';
  constructor(
    /** Offset in the scanned text where the problem was detected. */
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/** A located expression, in offsets of the scanned text: `start` is the `@`, `end` is just after the bracket. */
export interface ExpressionSpan {
  readonly start: number;
  readonly end: number;
}

const ENTITY = /^&(?:quot|apos|lt|gt|amp|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});/;
const NAMED_ENTITIES: Readonly<Record<string, string>> = { quot: '"', apos: "'", lt: '<', gt: '>', amp: '&' };

/** Decodes the five predefined XML entities and character references; anything else stays as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(quot|apos|lt|gt|amp|#[0-9]{1,7}|#x[0-9A-Fa-f]{1,6});/g, (_, body: string) => {
    if (body[0] !== '#') return NAMED_ENTITIES[body]!;
    const code = body[1] === 'x' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
    return code <= 0x10ffff ? String.fromCodePoint(code) : `&${body};`;
  });
}

/** Reads one logical character (an entity counts as the character it encodes). */
class Reader {
  constructor(
    readonly text: string,
    readonly entities: boolean,
  ) {}

  /** The logical character at `i` and the offset after it; `undefined` at the end. */
  at(i: number): [string | undefined, number] {
    const c = this.text[i];
    if (c === '&' && this.entities) {
      const m = ENTITY.exec(this.text.slice(i, i + 12));
      if (m !== null) return [decodeEntities(m[0]), i + m[0].length];
    }
    return [c, i + 1];
  }
}

const CLOSERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };

/**
 * Returns the offset just after the bracket that closes the expression whose `@` is at `start`
 * (`text[start+1]` must be `(` or `{`). Throws ScanError on an unterminated string or unbalanced brackets.
 */
export function findExpressionEnd(text: string, start: number, entities = true): number {
  const r = new Reader(text, entities);
  const [open, next] = r.at(start + 1);
  if (text[start] !== '@' || (open !== '(' && open !== '{')) {
    throw new ScanError(start, 'an expression starts with "@(" or "@{"');
  }
  return scanCode(r, next, CLOSERS[open]!, start);
}

function scanCode(r: Reader, from: number, closer: string, openedAt: number): number {
  let i = from;
  for (;;) {
    const [c, next] = r.at(i);
    if (c === undefined) {
      throw new ScanError(openedAt, `unterminated expression: no "${closer}" closes it`);
    }
    if (c === closer) return next;
    switch (c) {
      case '(':
      case '[':
      case '{':
        i = scanCode(r, next, CLOSERS[c]!, i);
        continue;
      case ')':
      case ']':
      case '}':
        throw new ScanError(i, `unbalanced "${c}" in expression (expected "${closer}")`);
      case '"':
        i = scanString(r, next, i, false, false);
        continue;
      case "'":
        i = scanChar(r, next, i);
        continue;
      case '@':
      case '$': {
        const prefix = stringPrefix(r, i);
        if (prefix !== undefined) {
          i = scanString(r, prefix.bodyStart, i, prefix.verbatim, prefix.interpolated);
          continue;
        }
        i = next;
        continue;
      }
      case '/': {
        const [c2, after2] = r.at(next);
        if (c2 === '/') {
          i = skipLineComment(r, after2);
          continue;
        }
        if (c2 === '*') {
          i = skipBlockComment(r, after2, i);
          continue;
        }
        i = next;
        continue;
      }
      default:
        i = next;
    }
  }
}

/** Recognises `@"`, `$"`, `$@"` and `@$"` at `i`. */
function stringPrefix(
  r: Reader,
  i: number,
): { bodyStart: number; verbatim: boolean; interpolated: boolean } | undefined {
  const [a, n1] = r.at(i);
  const [b, n2] = r.at(n1);
  if (b === '"') return { bodyStart: n2, verbatim: a === '@', interpolated: a === '$' };
  const [c, n3] = r.at(n2);
  if (c === '"' && ((a === '@' && b === '$') || (a === '$' && b === '@'))) {
    return { bodyStart: n3, verbatim: true, interpolated: true };
  }
  return undefined;
}

function scanString(
  r: Reader,
  from: number,
  openedAt: number,
  verbatim: boolean,
  interpolated: boolean,
): number {
  let i = from;
  for (;;) {
    const [c, next] = r.at(i);
    if (c === undefined || (!verbatim && c === '\n')) {
      throw new ScanError(openedAt, 'unterminated string literal in expression');
    }
    if (c === '"') {
      if (verbatim && r.at(next)[0] === '"') {
        i = r.at(next)[1];
        continue;
      }
      return next;
    }
    if (c === '\\' && !verbatim) {
      i = r.at(next)[1];
      continue;
    }
    if (interpolated && c === '{') {
      const [c2, after2] = r.at(next);
      if (c2 === '{') {
        i = after2;
        continue;
      }
      i = scanCode(r, next, '}', i);
      continue;
    }
    if (interpolated && c === '}' && r.at(next)[0] === '}') {
      i = r.at(next)[1];
      continue;
    }
    i = next;
  }
}

function scanChar(r: Reader, from: number, openedAt: number): number {
  let i = from;
  for (let n = 0; n < 12; n++) {
    const [c, next] = r.at(i);
    if (c === undefined || c === '\n') break;
    if (c === '\\') {
      i = r.at(next)[1];
      continue;
    }
    if (c === "'") return next;
    i = next;
  }
  throw new ScanError(openedAt, 'unterminated character literal in expression');
}

function skipLineComment(r: Reader, from: number): number {
  let i = from;
  for (;;) {
    const [c, next] = r.at(i);
    if (c === undefined || c === '\n') return i;
    i = next;
  }
}

function skipBlockComment(r: Reader, from: number, openedAt: number): number {
  let i = from;
  for (;;) {
    const [c, next] = r.at(i);
    if (c === undefined) throw new ScanError(openedAt, 'unterminated comment in expression');
    if (c === '*' && r.at(next)[0] === '/') return r.at(next)[1];
    i = next;
  }
}

/** True when an expression starts at `i` (after optional whitespace is skipped by the caller). */
function startsExpression(text: string, i: number): boolean {
  return text[i] === '@' && (text[i + 1] === '(' || text[i + 1] === '{');
}

function skipSpace(text: string, i: number): number {
  let j = i;
  while (j < text.length && /\s/.test(text[j]!)) j++;
  return j;
}

/**
 * Locates every expression in a policy document (attribute values and element text) and returns the text with
 * each one masked: `@` followed by `_` for every other character, newlines kept.
 */
export function maskExpressions(text: string): { masked: string; spans: ExpressionSpan[] } {
  const spans: ExpressionSpan[] = [];
  const n = text.length;
  let i = 0;
  const textAt = (from: number): number => {
    // Element text: an expression only at its start; the rest is skipped up to the next markup.
    const j = skipSpace(text, from);
    let k = j;
    if (startsExpression(text, j)) {
      k = findExpressionEnd(text, j);
      spans.push({ start: j, end: k });
    }
    const lt = text.indexOf('<', k);
    return lt < 0 ? n : lt;
  };
  i = textAt(0);
  while (i < n) {
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      i = textAt(end < 0 ? n : end + 3);
      continue;
    }
    if (text.startsWith('<![CDATA[', i)) {
      const end = text.indexOf(']]>', i + 9);
      i = textAt(end < 0 ? n : end + 3);
      continue;
    }
    if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      i = textAt(end < 0 ? n : end + 2);
      continue;
    }
    if (text.startsWith('<!', i)) {
      // A DOCTYPE: left for the XML parser to report (documents may not declare one).
      const end = text.indexOf('>', i + 2);
      i = textAt(end < 0 ? n : end + 1);
      continue;
    }
    // A start or end tag: walk its attributes.
    let j = i + 1;
    while (j < n && text[j] !== '>') {
      const c = text[j]!;
      if (c === '"' || c === "'") {
        const v = skipSpace(text, j + 1);
        let k = j + 1;
        if (startsExpression(text, v)) {
          k = findExpressionEnd(text, v);
          spans.push({ start: v, end: k });
        }
        const close = text.indexOf(c, k);
        if (close < 0) throw new ScanError(j, 'unterminated attribute value');
        j = close + 1;
        continue;
      }
      if (c === '<') break; // malformed; saxes reports it with its own message
      j++;
    }
    i = j < n && text[j] === '>' ? textAt(j + 1) : j;
  }
  if (spans.length === 0) return { masked: text, spans };
  let masked = '';
  let last = 0;
  for (const s of spans) {
    masked += text.slice(last, s.start);
    masked += '@';
    for (let p = s.start + 1; p < s.end; p++) {
      const c = text[p]!;
      masked += c === '\n' || c === '\r' ? c : '_';
    }
    last = s.end;
  }
  masked += text.slice(last);
  return { masked, spans };
}
