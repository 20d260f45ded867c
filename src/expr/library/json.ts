/**
 * Newtonsoft.Json: JToken/JObject/JArray/JValue/JProperty, JsonConvert, Formatting, JTokenType. Our own parser keeps
 * Newtonsoft's distinctions (Integer vs Float, 1.0 stays "1.0", big integers exact); output matches Newtonsoft's
 * writer (Formatting.None compact, Indented with two spaces and "name": value).
 */
import { CsAnon } from '../compile/support.js';
import { toDotNetStringRt } from '../runtime/convert.js';
import {
  argError,
  BoundedText,
  CsException,
  type CsType,
  checkSize,
  defineType,
  enumerate,
  invalidCast,
  type Method,
  prop,
  type Rt,
  typeName,
  typeOf,
} from '../runtime/core.js';
import { CsEnum, makeEnum } from '../runtime/enum.js';
import { formatDateTicks } from '../runtime/format-date.js';
import { formatDouble } from '../runtime/format-number.js';
import {
  CsChar,
  CsDateTime,
  CsDateTimeOffset,
  CsDecimal,
  CsDouble,
  CsGuid,
  CsTimeSpan,
} from '../runtime/values.js';
import { CsDictionary, CsKeyValue, CsList } from './collections.js';
import { defineEnumType } from './enums.js';
import { enumValue, int, setOut, str } from './helpers.js';
import { parseDouble, parseInt32, roundHalfEven } from './primitives.js';
import { StringComparison } from './string.js';

export const FormattingEnum = makeEnum('Formatting', { None: 0, Indented: 1 });
defineEnumType(FormattingEnum, 'Newtonsoft.Json');

export const JTokenTypeEnum = makeEnum('JTokenType', {
  None: 0,
  Object: 1,
  Array: 2,
  Constructor: 3,
  Property: 4,
  Comment: 5,
  Integer: 6,
  Float: 7,
  String: 8,
  Boolean: 9,
  Null: 10,
  Undefined: 11,
  Date: 12,
  Raw: 13,
  Bytes: 14,
  Guid: 15,
  Uri: 16,
  TimeSpan: 17,
});
defineEnumType(JTokenTypeEnum, 'Newtonsoft.Json.Linq');

export type JValueKind =
  | 'String'
  | 'Integer'
  | 'Float'
  | 'Boolean'
  | 'Null'
  | 'Date'
  | 'Guid'
  | 'TimeSpan'
  | 'Bytes'
  | 'Undefined';

export abstract class JToken {
  parent: JContainer | JProperty | null = null;
  abstract get tokenType(): string;
  abstract clone(): JToken;
}

export abstract class JContainer extends JToken {}

export class JValue extends JToken {
  constructor(
    readonly kind: JValueKind,
    /** string | number | bigint (Integer) | boolean | null | CsDateTime | CsGuid | Buffer */
    public value: unknown,
  ) {
    super();
  }
  get tokenType(): string {
    return this.kind;
  }
  clone(): JValue {
    return new JValue(this.kind, this.value);
  }
}

export class JProperty extends JToken {
  #value: JToken;
  constructor(
    readonly name: string,
    value: JToken,
  ) {
    super();
    this.#value = adopt(value, this);
  }
  get value(): JToken {
    return this.#value;
  }
  set value(v: JToken) {
    this.#value.parent = null;
    this.#value = adopt(v, this);
  }
  get tokenType(): string {
    return 'Property';
  }
  clone(): JProperty {
    return new JProperty(this.name, this.#value.clone());
  }
}

export class JObject extends JContainer {
  readonly props = new Map<string, JProperty>();
  get tokenType(): string {
    return 'Object';
  }
  get(name: string): JToken | null {
    return this.props.get(name)?.value ?? null;
  }
  set(name: string, value: JToken): void {
    const existing = this.props.get(name);
    if (existing) existing.value = value;
    else this.addProperty(new JProperty(name, value));
  }
  addProperty(p: JProperty): void {
    if (this.props.has(p.name)) {
      throw argError(
        `Can not add property ${p.name} to Newtonsoft.Json.Linq.JObject. Property with the same name already exists on object.`,
      );
    }
    const prop = p.parent ? p.clone() : p;
    prop.parent = this;
    this.props.set(prop.name, prop);
  }
  remove(name: string): boolean {
    const p = this.props.get(name);
    if (!p) return false;
    p.parent = null;
    return this.props.delete(name);
  }
  clone(): JObject {
    const o = new JObject();
    for (const p of this.props.values()) o.addProperty(p.clone());
    return o;
  }
}

export class JArray extends JContainer {
  readonly items: JToken[] = [];
  get tokenType(): string {
    return 'Array';
  }
  add(t: JToken): void {
    this.items.push(adopt(t, this));
  }
  clone(): JArray {
    const a = new JArray();
    for (const t of this.items) a.add(t.clone());
    return a;
  }
}

/** Newtonsoft clones a token that already has a parent when it is added elsewhere. */
function adopt<T extends JToken>(t: T, parent: JContainer | JProperty): T {
  const token = t.parent ? (t.clone() as T) : t;
  token.parent = parent;
  return token;
}

export function removeFromParent(t: JToken): void {
  const p = t.parent;
  if (p === null) throw new CsException('InvalidOperationException', 'The parent is missing.');
  if (p instanceof JObject && t instanceof JProperty) p.remove(t.name);
  else if (p instanceof JArray) {
    const i = p.items.indexOf(t);
    if (i >= 0) p.items.splice(i, 1);
  } else if (p instanceof JProperty) {
    // Removing a property's value removes the property (Newtonsoft throws; we follow: "Cannot add or remove items from JProperty").
    throw new CsException(
      'InvalidOperationException',
      'Cannot add or remove items from Newtonsoft.Json.Linq.JProperty.',
    );
  }
  t.parent = null;
}

// ---- parsing ----

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

// ---- writing ----

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

// ---- conversions between runtime values and tokens ----

/** JToken.FromObject / implicit conversions: runtime value → token (tokens are used as they are). */
export function fromValue(rt: Rt, v: unknown, depth = 0): JToken {
  if (depth > 64)
    throw new CsException('JsonSerializationException', 'Self referencing loop or nesting deeper than 64.');
  if (v === null || v === undefined) return new JValue('Null', null);
  if (v instanceof JToken) return v;
  switch (typeof v) {
    case 'string':
      return new JValue('String', v);
    case 'number':
      return new JValue('Integer', v);
    case 'bigint':
      return new JValue('Integer', v);
    case 'boolean':
      return new JValue('Boolean', v);
    default:
      break;
  }
  if (v instanceof CsDouble) return new JValue('Float', v.v);
  if (v instanceof CsDecimal) return new JValue('Float', v.v);
  if (v instanceof CsChar) return new JValue('String', String.fromCharCode(v.code));
  if (v instanceof CsGuid) return new JValue('Guid', v);
  if (v instanceof CsDateTime) return new JValue('Date', v);
  if (v instanceof CsDateTimeOffset || v instanceof CsTimeSpan)
    return new JValue('String', toDotNetStringRt(rt, v));
  if (v instanceof CsEnum) return new JValue('Integer', v.value);
  if (v instanceof Uint8Array) return new JValue('Bytes', v);
  if (v instanceof CsAnon) {
    const o = new JObject();
    for (const [k, x] of v.entries()) o.set(k, fromValue(rt, x, depth + 1));
    return o;
  }
  if (v instanceof CsDictionary) {
    const o = new JObject();
    for (const e of v.map.values()) o.set(toDotNetStringRt(rt, e.key), fromValue(rt, e.value, depth + 1));
    return o;
  }
  if (v instanceof CsKeyValue) {
    const o = new JObject();
    o.set('Key', fromValue(rt, v.key, depth + 1));
    o.set('Value', fromValue(rt, v.value, depth + 1));
    return o;
  }
  if (typeof v === 'object' && typeOf(v).enumerate) {
    const a = new JArray();
    for (const x of enumerate(v)) {
      checkSize(rt, a.items.length + 1);
      a.add(fromValue(rt, x, depth + 1));
    }
    return a;
  }
  // Other host objects (context members, Jwt, …) serialise as objects of their listed properties.
  const t = typeOf(v);
  const o = new JObject();
  for (let c: typeof t | undefined = t; c; c = c.base) {
    for (const [name, p] of c.props)
      if (!o.props.has(name)) o.set(name, fromValue(rt, p.get(rt, v), depth + 1));
  }
  return o;
}

const kindName = (t: JToken): string =>
  t instanceof JObject
    ? 'Object'
    : t instanceof JArray
      ? 'Array'
      : t instanceof JProperty
        ? 'Property'
        : (t as JValue).kind;

/** Explicit conversion of a token to a .NET primitive: (string)token, (int)token, token.Value<T>(), … */
export function tokenTo(t: unknown, target: string): unknown {
  if (t === null || t === undefined) return null;
  if (!(t instanceof JValue)) {
    if (target === 'string' && t instanceof JToken) {
      throw argError(`Can not convert ${kindName(t)} to String.`);
    }
    throw argError(`Can not convert ${t instanceof JToken ? kindName(t) : typeName(t)} to ${target}.`);
  }
  const v = t.value;
  if (t.kind === 'Null' || t.kind === 'Undefined') {
    if (target === 'string' || target === 'object') return null;
    throw argError(
      `Can not convert Null to ${target === 'int' ? 'Int32' : target === 'long' ? 'Int64' : target === 'bool' ? 'Boolean' : target}.`,
    );
  }
  switch (target) {
    case 'string':
    case 'object':
      if (t.kind === 'String') return v;
      if (t.kind === 'Float') return formatDouble(v as number);
      if (t.kind === 'Date') return toDotNetStringRt(null, v);
      if (t.kind === 'Bytes') return Buffer.from(v as Uint8Array).toString('base64');
      return toDotNetStringRt(null, v);
    case 'int': {
      if (t.kind === 'Integer') return Number(BigInt.asIntN(32, BigInt(v as number | bigint)));
      if (t.kind === 'Float') return roundHalfEven(v as number, 0) | 0;
      if (t.kind === 'Boolean') return v ? 1 : 0;
      if (t.kind === 'String') return parseInt32(v as string);
      break;
    }
    case 'long': {
      if (t.kind === 'Integer') return BigInt(v as number | bigint);
      if (t.kind === 'Float') return BigInt(roundHalfEven(v as number, 0));
      if (t.kind === 'Boolean') return v ? 1n : 0n;
      if (t.kind === 'String') return BigInt(parseInt32(v as string));
      break;
    }
    case 'double':
    case 'decimal': {
      let n: number | undefined;
      if (t.kind === 'Integer' || t.kind === 'Float') n = Number(v);
      else if (t.kind === 'Boolean') n = v ? 1 : 0;
      else if (t.kind === 'String') n = parseDouble(v as string);
      if (n !== undefined) return target === 'double' ? new CsDouble(n) : new CsDecimal(n);
      break;
    }
    case 'bool': {
      if (t.kind === 'Boolean') return v;
      if (t.kind === 'Integer' || t.kind === 'Float') return Number(v) !== 0;
      if (t.kind === 'String') {
        const s = (v as string).trim().toLowerCase();
        if (s === 'true') return true;
        if (s === 'false') return false;
        throw new CsException('FormatException', `String '${v}' was not recognized as a valid Boolean.`);
      }
      break;
    }
    default:
      break;
  }
  throw argError(`Can not convert ${t.kind} to ${target}.`);
}

/** token.ToObject<T>() and JsonConvert.DeserializeObject<T>(): token → runtime value of type T. */
export function toObject(rt: Rt, t: JToken, type: CsType | undefined): unknown {
  const name = type?.info.name;
  if (!type || name === 'Object') return t instanceof JValue ? jvalueRuntime(t) : t;
  if (type.info.test(t)) return t;
  switch (name) {
    case 'String':
      return tokenTo(t, 'string');
    case 'Int32':
      return tokenTo(t, 'int');
    case 'Int64':
      return tokenTo(t, 'long');
    case 'Double':
      return tokenTo(t, 'double');
    case 'Decimal':
      return tokenTo(t, 'decimal');
    case 'Boolean':
      return tokenTo(t, 'bool');
    default:
      break;
  }
  if (type.arrayRank > 0 || name === 'List`1' || name === 'IEnumerable`1') {
    if (!(t instanceof JArray))
      throw new CsException('JsonSerializationException', `Cannot deserialize ${kindName(t)} into an array.`);
    const elem = type.arrayRank > 0 ? type.args[0] : type.args[0];
    const items = t.items.map((x) => toObject(rt, x, elem));
    return name === 'List`1' ? new CsList(items) : items;
  }
  if (name === 'Dictionary`2') {
    if (!(t instanceof JObject))
      throw new CsException(
        'JsonSerializationException',
        `Cannot deserialize ${kindName(t)} into a dictionary.`,
      );
    const d = new CsDictionary();
    for (const p of t.props.values()) d.set(rt, p.name, toObject(rt, p.value, type.args[1]));
    return d;
  }
  throw new CsException(
    'JsonSerializationException',
    `Deserializing into '${type.info.name}' is not supported in policy expressions`,
  );
}

function jvalueRuntime(t: JValue): unknown {
  switch (t.kind) {
    case 'Integer':
      return typeof t.value === 'number' ? BigInt(t.value) : t.value;
    case 'Float':
      return new CsDouble(t.value as number);
    case 'Null':
    case 'Undefined':
      return null;
    default:
      return t.value;
  }
}

// ---- JSONPath for SelectToken ----

type PathStep =
  | { k: 'prop'; name: string }
  | { k: 'index'; i: number }
  | { k: 'wild' }
  | { k: 'deep'; name: string }
  | { k: 'filter'; path: string[]; op: string; value: unknown };

function parsePath(path: string): PathStep[] {
  const steps: PathStep[] = [];
  let i = 0;
  if (path[0] === '$') i = 1;
  while (i < path.length) {
    const c = path[i]!;
    if (c === '.') {
      if (path[i + 1] === '.') {
        const m = /^[^.[\]]+/.exec(path.slice(i + 2));
        if (!m) throw new CsException('JsonException', `Unexpected character while parsing path: ${path}`);
        steps.push({ k: 'deep', name: m[0] });
        i += 2 + m[0].length;
        continue;
      }
      i++;
      continue;
    }
    if (c === '[') {
      const end = path.indexOf(']', i);
      if (end < 0) throw new CsException('JsonException', `Path ended with an open indexer: ${path}`);
      const inner = path.slice(i + 1, end).trim();
      if (inner === '*') steps.push({ k: 'wild' });
      else if (/^-?\d+$/.test(inner)) steps.push({ k: 'index', i: Number(inner) });
      else if (/^'.*'$/.test(inner) || /^".*"$/.test(inner))
        steps.push({ k: 'prop', name: inner.slice(1, -1) });
      else {
        const f = /^\?\(@\.([\w.]+)\s*(==|!=|>|<|>=|<=)\s*(.+)\)$/.exec(inner);
        if (!f)
          throw new CsException('JsonException', `Unexpected character while parsing path indexer: ${inner}`);
        const raw = f[3]!.trim();
        const value = /^'.*'$/.test(raw)
          ? raw.slice(1, -1)
          : raw === 'true'
            ? true
            : raw === 'false'
              ? false
              : raw === 'null'
                ? null
                : Number(raw);
        steps.push({ k: 'filter', path: f[1]!.split('.'), op: f[2]!, value });
      }
      i = end + 1;
      continue;
    }
    if (c === '*') {
      steps.push({ k: 'wild' });
      i++;
      continue;
    }
    const m = /^[^.[\]]+/.exec(path.slice(i))!;
    steps.push({ k: 'prop', name: m[0] });
    i += m[0].length;
  }
  return steps;
}

const looseEq = (a: unknown, b: unknown): boolean =>
  a === b || ((typeof a === 'number' || typeof a === 'bigint') && Number(a) === Number(b));

function children(t: JToken): JToken[] {
  if (t instanceof JObject) return [...t.props.values()].map((p) => p.value);
  if (t instanceof JArray) return t.items;
  return [];
}

function descendants(t: JToken, out: JToken[]): void {
  for (const c of children(t)) {
    out.push(c);
    descendants(c, out);
  }
}

export function selectTokens(root: JToken, path: string): JToken[] {
  let cur: JToken[] = [root];
  for (const s of parsePath(path)) {
    const next: JToken[] = [];
    for (const t of cur) {
      if (s.k === 'prop') {
        if (t instanceof JObject) {
          const v = t.get(s.name);
          if (v) next.push(v);
        }
      } else if (s.k === 'index') {
        if (t instanceof JArray) {
          const v = t.items[s.i < 0 ? t.items.length + s.i : s.i];
          if (v) next.push(v);
        }
      } else if (s.k === 'wild') {
        next.push(...children(t));
      } else if (s.k === 'deep') {
        const all: JToken[] = [t];
        descendants(t, all);
        for (const d of all) if (d instanceof JObject && d.get(s.name)) next.push(d.get(s.name)!);
      } else {
        for (const c of children(t)) {
          let v: JToken | null = c;
          for (const n of s.path) v = v instanceof JObject ? v.get(n) : null;
          if (!(v instanceof JValue)) continue;
          const a = v.value;
          const b = s.value;
          const ok =
            s.op === '=='
              ? looseEq(a, b)
              : s.op === '!='
                ? !looseEq(a, b)
                : s.op === '>'
                  ? Number(a) > Number(b)
                  : s.op === '<'
                    ? Number(a) < Number(b)
                    : s.op === '>='
                      ? Number(a) >= Number(b)
                      : Number(a) <= Number(b);
          if (ok) next.push(c);
        }
      }
    }
    cur = next;
  }
  return cur;
}

// ---- type tables ----

const formattingArg = (args: unknown[]): boolean => {
  const f = args.find((a) => a instanceof CsEnum);
  return f ? enumValue(f, FormattingEnum) === FormattingEnum.members.Indented : false;
};

function tokenArg(rt: Rt, v: unknown): JToken {
  return fromValue(rt, v);
}

function tokenValueAs(rt: Rt, t: JToken | null, typeArgs: readonly CsType[]): unknown {
  if (t === null) return null;
  const target = typeArgs[0];
  if (!target) return t;
  return toObject(rt, t, target);
}

const tokenMethods: Record<string, Method> = {
  ToString: (rt, self: JToken, args) => {
    if (self instanceof JValue && args.length === 0) return tokenTo(self, 'string') ?? '';
    return writeJson(rt, self, args.length === 0 ? true : formattingArg(args));
  },
  Value: (rt, self: JToken, args, typeArgs) => {
    const key = args[0];
    let t: JToken | null;
    if (self instanceof JObject) t = self.get(str(key, 'key'));
    else if (self instanceof JArray) t = self.items[int(key)] ?? null;
    else
      throw new CsException('InvalidOperationException', `Cannot access child value on ${kindName(self)}.`);
    return tokenValueAs(rt, t, typeArgs);
  },
  SelectToken: (_rt, self: JToken, args) => {
    const found = selectTokens(self, str(args[0], 'path'));
    if (found.length > 1) throw new CsException('JsonException', 'Path returned multiple tokens.');
    if (found.length === 0 && args[1] === true)
      throw new CsException('JsonException', `Path '${args[0]}' does not exist.`);
    return found[0] ?? null;
  },
  SelectTokens: (_rt, self: JToken, args) => selectTokens(self, str(args[0], 'path')),
  DeepClone: (_rt, self: JToken) => self.clone(),
  Remove: (_rt, self: JToken) => {
    removeFromParent(self);
    return null;
  },
  Replace: (rt, self: JToken, args) => {
    const p = self.parent;
    const v = tokenArg(rt, args[0]);
    if (p instanceof JProperty) p.value = v;
    else if (p instanceof JArray) {
      const i = p.items.indexOf(self);
      p.items[i] = adopt(v, p);
      self.parent = null;
    } else if (p instanceof JObject && self instanceof JProperty && v instanceof JProperty) {
      p.remove(self.name);
      p.addProperty(v);
    }
    return null;
  },
  Children: (_rt, self: JToken) => (self instanceof JObject ? [...self.props.values()] : children(self)),
  ToObject: (rt, self: JToken, _args, typeArgs) => toObject(rt, self, typeArgs[0]),
  Values: (rt, self: JToken, _args, typeArgs) => {
    const kids = self instanceof JObject ? [...self.props.values()].map((p) => p.value) : children(self);
    return typeArgs[0] ? kids.map((k) => toObject(rt, k, typeArgs[0])) : kids;
  },
  Equals: (_rt, self: JToken, args) => self === args[0],
};

function pathOf(t: JToken): string {
  const parts: string[] = [];
  let cur: JToken = t;
  while (cur.parent) {
    const p: JContainer | JProperty = cur.parent;
    if (p instanceof JProperty) {
      parts.unshift(/^[A-Za-z_][\w]*$/.test(p.name) ? p.name : `['${p.name}']`);
      cur = p.parent ?? p;
      if (!p.parent) break;
      continue;
    }
    if (p instanceof JArray) parts.unshift(`[${p.items.indexOf(cur)}]`);
    cur = p;
  }
  return parts.join('.').replace(/\.\[/g, '[');
}

export const JTokenType = defineType({
  name: 'JToken',
  namespace: 'Newtonsoft.Json.Linq',
  aliases: ['JContainer'],
  classes: [],
  test: (v) => v instanceof JToken,
  explicitTo: tokenTo,
  convert: (v, explicit) => {
    if (v instanceof JToken) return v;
    if (
      !explicit &&
      (typeof v === 'string' ||
        typeof v === 'number' ||
        typeof v === 'boolean' ||
        typeof v === 'bigint' ||
        v instanceof CsDouble)
    ) {
      return fromValue(null as unknown as Rt, v);
    }
    throw invalidCast(typeName(v), 'Newtonsoft.Json.Linq.JToken');
  },
  props: {
    Type: prop((self: JToken) => JTokenTypeEnum.values.get(self.tokenType)!),
    Parent: prop((self: JToken) => self.parent),
    Root: prop((self: JToken) => {
      let c: JToken = self;
      while (c.parent) c = c.parent;
      return c;
    }),
    Path: prop((self: JToken) => pathOf(self)),
    HasValues: prop((self: JToken) => children(self).length > 0 || self instanceof JProperty),
    First: prop((self: JToken) =>
      self instanceof JObject ? ([...self.props.values()][0] ?? null) : (children(self)[0] ?? null),
    ),
    Last: prop((self: JToken) => {
      const c = self instanceof JObject ? [...self.props.values()] : children(self);
      return c[c.length - 1] ?? null;
    }),
    Next: prop((self: JToken) => sibling(self, 1)),
    Previous: prop((self: JToken) => sibling(self, -1)),
  },
  methods: tokenMethods,
  indexer: {
    get: (_rt, self: JToken, args) => {
      if (self instanceof JObject) return self.get(str(args[0], 'key'));
      if (self instanceof JArray) {
        const i = int(args[0]);
        if (i < 0 || i >= self.items.length) {
          throw new CsException(
            'ArgumentOutOfRangeException',
            "Index was out of range. Must be non-negative and less than the size of the collection. (Parameter 'index')",
          );
        }
        return self.items[i];
      }
      if (self instanceof JProperty) return (self.value as JToken) ?? null;
      throw new CsException('InvalidOperationException', `Cannot access child value on ${kindName(self)}.`);
    },
    set: (rt, self: JToken, args, v) => {
      if (self instanceof JObject) self.set(str(args[0], 'key'), tokenArg(rt, v));
      else if (self instanceof JArray) {
        const i = int(args[0]);
        if (i < 0 || i >= self.items.length)
          throw new CsException('ArgumentOutOfRangeException', 'Index was out of range.');
        self.items[i]!.parent = null;
        self.items[i] = adopt(tokenArg(rt, v), self);
      } else
        throw new CsException('InvalidOperationException', `Cannot set child value on ${kindName(self)}.`);
    },
  },
  staticMethods: {
    Parse: (rt, _s, args) => parseJson(str(args[0], 'json'), rt),
    FromObject: (rt, _s, args) => fromValue(rt, args[0]),
    DeepEquals: (rt, _s, args) =>
      writeJson(rt, tokenArg(rt, args[0]), false) === writeJson(rt, tokenArg(rt, args[1]), false),
  },
  enumerate: (self: JToken) => (self instanceof JObject ? [...self.props.values()] : children(self)),
});

function sibling(t: JToken, d: 1 | -1): JToken | null {
  const p = t.parent;
  if (p instanceof JArray) return p.items[p.items.indexOf(t) + d] ?? null;
  if (p instanceof JObject && t instanceof JProperty) {
    const list = [...p.props.values()];
    return list[list.indexOf(t) + d] ?? null;
  }
  return null;
}

function addToObject(rt: Rt, self: JObject, args: unknown[]): void {
  if (args.length === 2) {
    self.addProperty(new JProperty(str(args[0], 'propertyName'), tokenArg(rt, args[1])));
  } else if (args[0] instanceof JProperty) {
    self.addProperty(args[0]);
  } else if (args[0] !== null && typeof args[0] === 'object' && typeOf(args[0]).enumerate) {
    for (const p of enumerate(args[0])) addToObject(rt, self, [p]);
  } else {
    throw argError(`Can not add ${typeName(args[0])} to Newtonsoft.Json.Linq.JObject.`);
  }
  checkSize(rt, self.props.size);
}

export const JObjectType = defineType({
  name: 'JObject',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JObject],
  convert: (v) => {
    if (v instanceof JObject) return v;
    throw invalidCast(typeName(v), 'Newtonsoft.Json.Linq.JObject');
  },
  construct: (rt, args) => {
    const o = new JObject();
    if (args.length === 1 && args[0] instanceof JObject) return args[0].clone();
    for (const a of args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args) {
      if (a === null) continue;
      addToObject(rt, o, [a]);
    }
    return o;
  },
  addItem: (rt, self: JObject, args) => addToObject(rt, self, args),
  props: {
    Count: prop((self: JObject) => self.props.size),
  },
  methods: {
    Add: (rt, self: JObject, args) => {
      addToObject(rt, self, args);
      return null;
    },
    Property: (_rt, self: JObject, args) => self.props.get(str(args[0], 'name')) ?? null,
    Properties: (_rt, self: JObject) => [...self.props.values()],
    ContainsKey: (_rt, self: JObject, args) => self.props.has(str(args[0], 'propertyName')),
    Remove: (_rt, self: JObject, args) => {
      if (args.length === 0) {
        removeFromParent(self);
        return null;
      }
      return self.remove(str(args[0], 'propertyName'));
    },
    TryGetValue: (_rt, self: JObject, args) => {
      const v = self.get(str(args[0], 'propertyName'));
      setOut(args[1], v);
      return v !== null;
    },
    GetValue: (_rt, self: JObject, args) => {
      const name = str(args[0], 'propertyName');
      if (
        args.length > 1 &&
        enumValue(args[1], StringComparison) === StringComparison.members.OrdinalIgnoreCase
      ) {
        for (const p of self.props.values()) if (p.name.toUpperCase() === name.toUpperCase()) return p.value;
        return null;
      }
      return self.get(name);
    },
    Merge: (rt, self: JObject, args) => {
      const other = tokenArg(rt, args[0]);
      if (other instanceof JObject) {
        for (const p of other.props.values()) {
          const mine = self.get(p.name);
          if (mine instanceof JObject && p.value instanceof JObject)
            JObjectType.methods.get('Merge')!(rt, mine, [p.value], []);
          else if (mine instanceof JArray && p.value instanceof JArray)
            for (const x of p.value.items) mine.add(x.clone());
          else self.set(p.name, p.value.clone());
        }
      }
      return null;
    },
  },
  staticMethods: {
    Parse: (rt, _s, args) => {
      const t = parseJson(str(args[0], 'json'), rt);
      if (!(t instanceof JObject)) {
        throw new CsException(
          'JsonReaderException',
          `Error reading JObject from JsonReader. Current JsonReader item is not an object: ${kindName(t)}.`,
        );
      }
      return t;
    },
    FromObject: (rt, _s, args) => {
      const t = fromValue(rt, args[0]);
      if (!(t instanceof JObject))
        throw argError(`Object serialized to ${kindName(t)}. JObject instance expected.`);
      return t;
    },
  },
  enumerate: (self: JObject) => [...self.props.values()].map((p) => new CsKeyValue(p.name, p.value)),
});

export const JArrayType = defineType({
  name: 'JArray',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JArray],
  construct: (rt, args) => {
    const a = new JArray();
    const src =
      args.length === 1 && args[0] !== null && typeof args[0] === 'object' && !(args[0] instanceof JToken)
        ? enumerate(args[0])
        : args;
    for (const x of src) {
      checkSize(rt, a.items.length + 1);
      a.add(tokenArg(rt, x));
    }
    return a;
  },
  addItem: (rt, self: JArray, args) => {
    checkSize(rt, self.items.length + 1);
    self.add(tokenArg(rt, args[0]));
  },
  props: { Count: prop((self: JArray) => self.items.length) },
  methods: {
    Add: (rt, self: JArray, args) => {
      checkSize(rt, self.items.length + 1);
      self.add(tokenArg(rt, args[0]));
      return null;
    },
    Insert: (rt, self: JArray, args) => {
      self.items.splice(int(args[0]), 0, adopt(tokenArg(rt, args[1]), self));
      return null;
    },
    RemoveAt: (_rt, self: JArray, args) => {
      const [t] = self.items.splice(int(args[0]), 1);
      if (t) t.parent = null;
      return null;
    },
    Remove: (_rt, self: JArray, args) => {
      if (args.length === 0) {
        removeFromParent(self);
        return null;
      }
      const i = self.items.indexOf(args[0] as JToken);
      if (i < 0) return false;
      self.items.splice(i, 1)[0]!.parent = null;
      return true;
    },
    Clear: (_rt, self: JArray) => {
      self.items.length = 0;
      return null;
    },
    IndexOf: (_rt, self: JArray, args) => self.items.indexOf(args[0] as JToken),
  },
  staticMethods: {
    Parse: (rt, _s, args) => {
      const t = parseJson(str(args[0], 'json'), rt);
      if (!(t instanceof JArray)) {
        throw new CsException(
          'JsonReaderException',
          `Error reading JArray from JsonReader. Current JsonReader item is not an array: ${kindName(t)}.`,
        );
      }
      return t;
    },
    FromObject: (rt, _s, args) => {
      const t = fromValue(rt, args[0]);
      if (!(t instanceof JArray))
        throw argError(`Object serialized to ${kindName(t)}. JArray instance expected.`);
      return t;
    },
  },
  enumerate: (self: JArray) => self.items,
});

export const JValueType = defineType({
  name: 'JValue',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JValue],
  // A JValue compared with a primitive compares its value (C# would compare references after an implicit
  // conversion — always false — which no policy relies on).
  valueEquals: (self: JValue, other) => {
    if (other instanceof JValue) return self.kind === other.kind && self.value === other.value;
    if (typeof other === 'string' || typeof other === 'boolean' || typeof other === 'number') {
      const target = typeof other === 'string' ? 'string' : typeof other === 'boolean' ? 'bool' : 'int';
      return self.kind !== 'Null' && tokenTo(self, target) === other;
    }
    return false;
  },
  construct: (rt, args) => {
    const t = fromValue(rt, args[0]);
    return t instanceof JValue ? t : new JValue('String', toDotNetStringRt(rt, args[0]));
  },
  props: {
    Value: {
      get: (_rt, self: JValue) => jvalueRuntime(self),
      set: (rt, self: JValue, v) => {
        const t = fromValue(rt, v) as JValue;
        (self as { kind: JValueKind }).kind = t.kind;
        self.value = t.value;
      },
    },
  },
  staticMethods: {
    CreateNull: () => new JValue('Null', null),
    CreateString: (_rt, _s, args) => new JValue('String', args[0] ?? null),
  },
});

export const JPropertyType = defineType({
  name: 'JProperty',
  namespace: 'Newtonsoft.Json.Linq',
  base: JTokenType,
  classes: [JProperty],
  construct: (rt, args) => {
    const name = str(args[0], 'name');
    if (args.length > 2) {
      // new JProperty("name", a, b, …) is a property holding an array of the values.
      const a = new JArray();
      for (const x of args.slice(1)) a.add(tokenArg(rt, x));
      return new JProperty(name, a);
    }
    return new JProperty(name, tokenArg(rt, args[1] ?? null));
  },
  props: {
    Name: prop((self: JProperty) => self.name),
    Value: {
      get: (_rt, self: JProperty) => self.value,
      set: (rt, self: JProperty, v) => {
        self.value = tokenArg(rt, v);
      },
    },
  },
});

// ---- JsonConvert ----

export function serialize(rt: Rt, v: unknown, indented: boolean): string {
  if (typeof v === 'string') return quote(v);
  return writeJson(rt, fromValue(rt, v), indented);
}

export const JsonConvertType = defineType({
  name: 'JsonConvert',
  namespace: 'Newtonsoft.Json',
  staticMethods: {
    SerializeObject: (rt, _s, args) => serialize(rt, args[0], formattingArg(args.slice(1))),
    DeserializeObject: (rt, _s, args, typeArgs) => {
      const text = str(args[0], 'value');
      const t = parseJson(text, rt);
      if (typeArgs[0]) return toObject(rt, t, typeArgs[0]);
      return t instanceof JValue ? jvalueRuntime(t) : t;
    },
    ToString: (rt, _s, args) => serialize(rt, args[0], false),
  },
});
