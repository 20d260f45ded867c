/**
 * Tokens → JSON text, matching Newtonsoft's writer: Formatting.None compact, Indented with two spaces and
 * "name": value; floats keep a ".0", dates are ISO 8601 with Newtonsoft's fraction.
 */
import { toDotNetStringRt } from '../../runtime/convert.js';
import { BoundedText, type Rt } from '../../runtime/core.js';
import { formatDateTicks } from '../../runtime/format-date.js';
import { formatDouble } from '../../runtime/format-number.js';
import { CsDateTime } from '../../runtime/values.js';
import { fromValue } from './conversions.js';
import { JArray, JObject, JProperty, type JToken, JValue } from './tokens.js';

function quote(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c < 32 || c === 0x85 || c === 0x2028 || c === 0x2029)
      out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

export function floatText(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  const s = formatDouble(v);
  return /[.E]/.test(s) ? s : `${s}.0`;
}

function isoDate(d: CsDateTime): string {
  return formatDateTicks(d.ticks, "yyyy'-'MM'-'dd'T'HH':'mm':'ss.FFFFFFFK", d.kind, null);
}

function valueJson(v: JValue): string {
  switch (v.kind) {
    case 'String':
      return quote(v.value as string);
    case 'Integer':
      return String(v.value);
    case 'Float':
      return floatText(v.value as number);
    case 'Boolean':
      return v.value ? 'true' : 'false';
    case 'Null':
      return 'null';
    case 'Undefined':
      return 'undefined';
    case 'Raw':
      return v.value === null ? '' : String(v.value);
    case 'Date':
      return quote(v.value instanceof CsDateTime ? isoDate(v.value) : String(v.value));
    case 'Bytes':
      return quote(Buffer.from(v.value as Uint8Array).toString('base64'));
    default:
      return quote(toDotNetStringRt(null, v.value));
  }
}

/** JSON text of a token; with `rt`, the output is counted as it is written and the string limit raised on the way. */
export function writeJson(rt: Rt | null, t: JToken, indented: boolean): string {
  const out = new BoundedText(rt);
  writeToken(out, t, indented, 0);
  return out.toString();
}

function writeToken(out: BoundedText, t: JToken, indented: boolean, level: number): void {
  if (t instanceof JValue) {
    out.add(valueJson(t));
    return;
  }
  if (t instanceof JProperty) {
    out.add(`${quote(t.name)}:${indented ? ' ' : ''}`);
    writeToken(out, t.value, indented, level);
    return;
  }
  if (!(t instanceof JObject || t instanceof JArray)) {
    out.add('null');
    return;
  }
  const children: JToken[] = t instanceof JObject ? [...t.props.values()] : t.items;
  const [open, close] = t instanceof JObject ? ['{', '}'] : ['[', ']'];
  if (children.length === 0) {
    out.add(open + close);
    return;
  }
  const nl = indented ? '\n' : '';
  const indent = (n: number): string => (indented ? '  '.repeat(n) : '');
  out.add(open + nl);
  children.forEach((child, k) => {
    out.add((k > 0 ? `,${nl}` : '') + indent(level + 1));
    writeToken(out, child, indented, level + 1);
  });
  out.add(nl + indent(level) + close);
}

/** JsonConvert.SerializeObject: a string is written as a JSON string; anything else as the token it converts to. */
export function serialize(rt: Rt, v: unknown, indented: boolean): string {
  if (typeof v === 'string') return quote(v);
  return writeJson(rt, fromValue(rt, v), indented);
}
