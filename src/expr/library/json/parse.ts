/**
 * JSON text → tokens, as JToken.Parse reads it. Our own parser keeps Newtonsoft's distinctions (Integer vs Float,
 * 1.0 stays "1.0", big integers exact), its leniencies (single-quoted strings, the last of duplicate names) and its
 * JsonReaderException messages with line and position.
 */
import { CsException, checkSize, type Rt } from '../../runtime/core.js';
import { JArray, JObject, type JToken, JValue } from './tokens.js';

const readerError = (msg: string, pos: number, text: string): CsException => {
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - before.lastIndexOf('\n');
  return new CsException('JsonReaderException', `${msg} Path '', line ${line}, position ${col}.`);
};

export function parseJson(text: string, rt?: Rt): JToken {
  let i = 0;
  let count = 0;
  const ws = (): void => {
    while (i < text.length && ' \t\r\n\ufeff'.includes(text[i]!)) i++;
  };
  const value = (depth: number): JToken => {
    if (depth > 64) throw readerError("The reader's MaxDepth of 64 has been exceeded.", i, text);
    if (rt && ++count % 256 === 0) checkSize(rt, count);
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const o = new JObject();
      ws();
      if (text[i] === '}') {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text[i] !== '"' && text[i] !== "'")
          throw readerError(`Invalid property identifier character: ${text[i] ?? 'EOF'}.`, i, text);
        const name = string();
        ws();
        if (text[i] !== ':')
          throw readerError(
            `Invalid character after parsing property name. Expected ':' but got: ${text[i] ?? 'EOF'}.`,
            i,
            text,
          );
        i++;
        const v = value(depth + 1);
        // Duplicate names: Newtonsoft's JObject.Parse keeps the last value.
        o.set(name, v);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return o;
        }
        throw readerError(
          `After parsing a value an unexpected character was encountered: ${text[i] ?? 'EOF'}.`,
          i,
          text,
        );
      }
    }
    if (c === '[') {
      i++;
      const a = new JArray();
      ws();
      if (text[i] === ']') {
        i++;
        return a;
      }
      for (;;) {
        a.add(value(depth + 1));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return a;
        }
        throw readerError(
          `After parsing a value an unexpected character was encountered: ${text[i] ?? 'EOF'}.`,
          i,
          text,
        );
      }
    }
    if (c === '"' || c === "'") return new JValue('String', string());
    if (text.startsWith('true', i)) {
      i += 4;
      return new JValue('Boolean', true);
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return new JValue('Boolean', false);
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return new JValue('Null', null);
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (m) {
      i += m[0].length;
      if (m[1] || m[2]) return new JValue('Float', Number(m[0]));
      const big = BigInt(m[0]);
      return new JValue('Integer', big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big);
    }
    if (i >= text.length) throw readerError('Unexpected end of content while loading JObject.', i, text);
    throw readerError(`Unexpected character encountered while parsing value: ${c}.`, i, text);
  };
  const string = (): string => {
    const q = text[i]!;
    i++;
    let out = '';
    while (i < text.length && text[i] !== q) {
      const ch = text[i]!;
      if (ch === '\\') {
        const e = text[i + 1];
        const map: Record<string, string> = {
          n: '\n',
          t: '\t',
          r: '\r',
          b: '\b',
          f: '\f',
          '/': '/',
          '\\': '\\',
          '"': '"',
          "'": "'",
        };
        if (e === 'u') {
          out += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
          continue;
        }
        if (e === undefined || map[e] === undefined)
          throw readerError(`Bad JSON escape sequence: \\${e ?? ''}.`, i, text);
        out += map[e];
        i += 2;
        continue;
      }
      out += ch;
      i++;
    }
    if (i >= text.length) throw readerError('Unterminated string. Expected delimiter: ".', i, text);
    i++;
    return out;
  };
  const v = value(0);
  ws();
  if (i < text.length)
    throw readerError(
      `Additional text encountered after finished reading JSON content: ${text[i]}.`,
      i,
      text,
    );
  return v;
}
