/**
 * Conversions between runtime values and tokens: JToken.FromObject and the implicit conversions (value → token), the
 * explicit casts and Value<T>() (token → .NET primitive), and ToObject<T>() / DeserializeObject<T>() (token → T).
 */
import { CsAnon } from '../../compile/support.js';
import { toDotNetStringRt } from '../../runtime/convert.js';
import {
  argError,
  CsException,
  type CsType,
  checkSize,
  enumerate,
  type Rt,
  typeName,
  typeOf,
} from '../../runtime/core.js';
import { parseDecimal } from '../../runtime/decimal.js';
import { CsEnum } from '../../runtime/enum.js';
import { formatDouble } from '../../runtime/format-number.js';
import {
  CsChar,
  CsDateTime,
  CsDateTimeOffset,
  CsDecimal,
  CsDouble,
  CsGuid,
  CsTimeSpan,
} from '../../runtime/values.js';
import { CsDictionary, CsKeyValue, CsList } from '../collections.js';
import { parseDouble, parseInt32, roundHalfEven } from '../primitives.js';
import { JArray, JObject, JToken, JValue, kindName } from './tokens.js';

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
    case 'decimal': {
      if (t.kind === 'Integer') return CsDecimal.fromInteger(v as number | bigint);
      if (t.kind === 'Float') return CsDecimal.fromNumber(v as number);
      if (t.kind === 'Boolean') return CsDecimal.fromInteger(v ? 1 : 0);
      if (t.kind === 'String') return parseDecimal(v as string);
      break;
    }
    case 'double': {
      let n: number | undefined;
      if (t.kind === 'Integer' || t.kind === 'Float') n = Number(v);
      else if (t.kind === 'Boolean') n = v ? 1 : 0;
      else if (t.kind === 'String') n = parseDouble(v as string);
      if (n !== undefined) return new CsDouble(n);
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

/** A JValue as the runtime value .NET would box: integers are long, floats double, null and undefined null. */
export function jvalueRuntime(t: JValue): unknown {
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
