/**
 * Finds `@( … )` and `@{ … }` expressions in policy XML the way API Management reads them: a C#-aware bracket
 * scanner (strings, verbatim and interpolated strings, chars, comments) so raw quotes and `<` inside attribute values
 * do not end the expression. Returns the text inside the brackets with XML entities decoded.
 */
export interface FoundExpression {
  kind: 'expression' | 'block';
  text: string;
  line: number;
  column: number;
}

function skipString(s: string, i: number): number {
  // s[i] is the opening quote of a regular string or char literal.
  const q = s[i]!;
  i++;
  while (i < s.length && s[i] !== q) {
    if (s[i] === '\\') i++;
    i++;
  }
  return i + 1;
}

function skipVerbatim(s: string, i: number): number {
  // s[i] is the opening quote.
  i++;
  while (i < s.length) {
    if (s[i] === '"') {
      if (s[i + 1] === '"') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return i;
}

function skipInterpolated(s: string, i: number, verbatim: boolean): number {
  i++;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"') {
      if (verbatim && s[i + 1] === '"') {
        i += 2;
        continue;
      }
      return i + 1;
    }
    if (!verbatim && c === '\\') {
      i += 2;
      continue;
    }
    if (c === '{') {
      if (s[i + 1] === '{') {
        i += 2;
        continue;
      }
      i = scanBalanced(s, i + 1, '}');
      continue;
    }
    i++;
  }
  return i;
}

/** Index just past the matching `close`, starting inside the bracket. */
export function scanBalanced(s: string, i: number, close: string): number {
  const stack: string[] = [close];
  while (i < s.length) {
    const c = s[i]!;
    if (c === '/' && s[i + 1] === '/') {
      const nl = s.indexOf('\n', i);
      i = nl < 0 ? s.length : nl;
      continue;
    }
    if (c === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      i = end < 0 ? s.length : end + 2;
      continue;
    }
    if (c === '@' && s[i + 1] === '"') {
      i = skipVerbatim(s, i + 1);
      continue;
    }
    if (c === '$' && s[i + 1] === '"') {
      i = skipInterpolated(s, i + 1, false);
      continue;
    }
    if (
      (c === '$' && s[i + 1] === '@' && s[i + 2] === '"') ||
      (c === '@' && s[i + 1] === '$' && s[i + 2] === '"')
    ) {
      i = skipInterpolated(s, i + 2, true);
      continue;
    }
    if (c === '"' || c === "'") {
      i = skipString(s, i);
      continue;
    }
    if (c === '(' || c === '{' || c === '[') stack.push(c === '(' ? ')' : c === '{' ? '}' : ']');
    else if (c === ')' || c === '}' || c === ']') {
      const want = stack.pop();
      if (want !== c) return -1;
      if (stack.length === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

const ENTITIES: Record<string, string> = { quot: '"', lt: '<', gt: '>', amp: '&', apos: "'" };

export function decodeEntities(s: string): string {
  return s.replace(
    /&(quot|lt|gt|amp|apos|#(\d+)|#x([0-9a-fA-F]+));/g,
    (_m, name: string, dec?: string, hex?: string) => {
      if (dec) return String.fromCodePoint(Number(dec));
      if (hex) return String.fromCodePoint(Number.parseInt(hex, 16));
      return ENTITIES[name]!;
    },
  );
}

export function findExpressions(xml: string): FoundExpression[] {
  const out: FoundExpression[] = [];
  let i = 0;
  // Entities are decoded first only for locating; expressions written with &quot; have no raw quotes to confuse us.
  while (i < xml.length) {
    const at = xml.indexOf('@', i);
    if (at < 0) break;
    const open = xml[at + 1];
    // Skip XML comments.
    const commentStart = xml.lastIndexOf('<!--', at);
    if (commentStart >= 0 && xml.indexOf('-->', commentStart) > at) {
      i = xml.indexOf('-->', commentStart) + 3;
      continue;
    }
    if (open !== '(' && open !== '{') {
      i = at + 1;
      continue;
    }
    const decodedTail = xml.slice(at + 2);
    const end = scanBalanced(xml, at + 2, open === '(' ? ')' : '}');
    let raw: string;
    if (end < 0) {
      // Perhaps XML-escaped quotes confuse the scanner: decode and retry on the decoded text.
      const decoded = decodeEntities(decodedTail);
      const e2 = scanBalanced(decoded, 0, open === '(' ? ')' : '}');
      if (e2 < 0) {
        i = at + 2;
        continue;
      }
      raw = decoded.slice(0, e2 - 1);
      i = at + 2;
    } else {
      raw = decodeEntities(xml.slice(at + 2, end - 1));
      i = end;
    }
    const before = xml.slice(0, at + 2);
    const line = before.split('\n').length;
    const column = at + 3 - (before.lastIndexOf('\n') + 1);
    out.push({ kind: open === '(' ? 'expression' : 'block', text: raw, line, column });
  }
  return out;
}
