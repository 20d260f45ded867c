/**
 * Where in a JSON text a value is: the line and position API Management's validation errors end with
 * ("… Line: 3, Position: 14"). The text has already been parsed, so this scanner only skips tokens on its way to
 * the value a JSON pointer names; it gives up (line 0, position 0, as Json.NET reports an unknown place) on
 * anything it does not expect.
 */

export interface TextPosition {
  /** 1-based; 0 when the place is unknown. */
  readonly line: number;
  /** 1-based column of the value's first character; 0 when unknown. */
  readonly position: number;
}

const UNKNOWN: TextPosition = { line: 0, position: 0 };

/** The position of the value at `pointer` (`/items/0/price`; `` for the whole document). */
export function positionOf(text: string, pointer: string): TextPosition {
  const steps = pointer === '' ? [] : pointer.slice(1).split('/').map(unescapePointer);
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n\ufeff'.includes(text[i]!)) i++;
  };
  const skipString = (): string => {
    const start = ++i;
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    const raw = text.slice(start, i++);
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      return raw;
    }
  };
  const skipValue = (): void => {
    ws();
    const ch = text[i];
    if (ch === '"') skipString();
    else if (ch === '{' || ch === '[') {
      const close = ch === '{' ? '}' : ']';
      i++;
      ws();
      while (i < text.length && text[i] !== close) {
        if (ch === '{') {
          ws();
          skipString();
          ws();
          i++; // ':'
        }
        skipValue();
        ws();
        if (text[i] === ',') i++;
        ws();
      }
      i++;
    } else while (i < text.length && !',]} \t\r\n'.includes(text[i]!)) i++;
  };
  for (const step of steps) {
    ws();
    const open = text[i];
    if (open !== '{' && open !== '[') return UNKNOWN;
    i++;
    let found = false;
    for (let index = 0; i < text.length; index++) {
      ws();
      if (text[i] === '}' || text[i] === ']') return UNKNOWN;
      let key = String(index);
      if (open === '{') {
        key = skipString();
        ws();
        i++; // ':'
      }
      ws();
      if (key === step) {
        found = true;
        break;
      }
      skipValue();
      ws();
      if (text[i] === ',') i++;
    }
    if (!found) return UNKNOWN;
  }
  ws();
  if (i >= text.length) return UNKNOWN;
  const before = text.slice(0, i);
  const line = before.split('\n').length;
  return { line, position: i - before.lastIndexOf('\n') };
}

function unescapePointer(step: string): string {
  return step.replace(/~1/g, '/').replace(/~0/g, '~');
}
