/** System.Object, Boolean, Int32/Int64/Double (and their aliases), Char, delegates, enums, exceptions. */
import { CsAnon, isInstance } from '../compile/support.js';
import {
  asDecimal,
  asNumber,
  compare,
  equals,
  toDotNetStringRt,
  toInt32,
  toInt64,
} from '../runtime/convert.js';
import {
  argError,
  CsException,
  type CsType,
  declaredExplicitConversion,
  defineType,
  formatError,
  invalidCast,
  type Method,
  prop,
  setPrimitiveTypes,
  type TypeInfo,
  typeName,
  typeOf,
} from '../runtime/core.js';
import { CsEnum } from '../runtime/enum.js';
import { formatDecimal } from '../runtime/format-decimal.js';
import { formatDouble, formatNumber } from '../runtime/format-number.js';
import { CsChar, CsDecimal, CsDouble } from '../runtime/values.js';
import { hashString, int, isOut, optStr, setOut, str } from './helpers.js';
import { StringType } from './string.js';

export const ObjectType = defineType({
  name: 'Object',
  namespace: 'System',
  aliases: ['object'],
  test: (v) => v !== null && v !== undefined,
  props: NullableMembers_(),
  methods: {
    ToString: (_rt, self) => typeOf(self).fullName,
    Equals: (_rt, self, args) => equals(self, args[0]),
    GetHashCode: (_rt, self) => hashString(toDotNetStringRt(null, self)),
  },
});

export const compareTo: Method = (_rt, self, args) => {
  const c = args[0] === null ? 1 : compare(self, args[0]);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
};

export const BooleanType = defineType({
  name: 'Boolean',
  namespace: 'System',
  aliases: ['bool'],
  classes: [],
  test: (v) => typeof v === 'boolean',
  defaultValue: false,
  convert: (v, explicit) => {
    if (typeof v === 'boolean') return v;
    const declared = explicit ? declaredExplicitConversion(v) : undefined;
    if (declared) return declared(v, 'bool');
    throw invalidCast(typeName(v), 'System.Boolean');
  },
  methods: {
    ToString: (_rt, self) => (self ? 'True' : 'False'),
    CompareTo: compareTo,
  },
  staticProps: {
    TrueString: prop(() => 'True'),
    FalseString: prop(() => 'False'),
  },
  staticMethods: {
    Parse: (_rt, _s, args) => parseBool(str(args[0])),
    TryParse: (_rt, _s, args) => {
      try {
        setOut(args[1], parseBool(str(args[0])));
        return true;
      } catch {
        setOut(args[1], false);
        return false;
      }
    },
  },
});

function parseBool(s: string): boolean {
  const t = s.trim().toLowerCase();
  if (t === 'true') return true;
  if (t === 'false') return false;
  throw formatError(`String '${s}' was not recognized as a valid Boolean.`);
}

const INT_RE = /^\s*([+-]?)(\d+)\s*$/;

export function parseInt32(s: string): number {
  const m = INT_RE.exec(s);
  if (!m) throw formatError(`The input string '${s}' was not in a correct format.`);
  const v = BigInt(m[1] + m[2]!);
  if (v > 2147483647n || v < -2147483648n) {
    throw new CsException('OverflowException', 'Value was either too large or too small for an Int32.');
  }
  return Number(v);
}

export function parseInt64(s: string): bigint {
  const m = INT_RE.exec(s);
  if (!m) throw formatError(`The input string '${s}' was not in a correct format.`);
  const v = BigInt(m[1] + m[2]!);
  if (v > 9223372036854775807n || v < -9223372036854775808n) {
    throw new CsException('OverflowException', 'Value was either too large or too small for an Int64.');
  }
  return v;
}

const FLOAT_RE = /^\s*[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?(?:[eE][+-]?\d+)?\s*$/;

export function parseDouble(s: string): number {
  const t = s.trim();
  if (t === 'NaN') return Number.NaN;
  if (t === 'Infinity' || t === '∞') return Number.POSITIVE_INFINITY;
  if (t === '-Infinity' || t === '-∞') return Number.NEGATIVE_INFINITY;
  if (!FLOAT_RE.test(s) || !/\d/.test(t))
    throw formatError(`The input string '${s}' was not in a correct format.`);
  return Number(t.replace(/,/g, ''));
}

export function tryParse(parse: (s: string) => unknown, fallback: unknown): Method {
  return (_rt, _s, args) => {
    const out = args[args.length - 1];
    if (!isOut(out)) throw argError('TryParse needs an out argument');
    const s = args[0];
    if (typeof s !== 'string') {
      setOut(out, fallback);
      return false;
    }
    try {
      setOut(out, parse(s));
      return true;
    } catch (e) {
      if (!(e instanceof CsException)) throw e;
      setOut(out, fallback);
      return false;
    }
  };
}

export const numberToString: Method = (rt, self, args) => {
  const format = args.length > 0 ? optStr(args[0]) : null;
  if (typeof self === 'number') return formatNumber(self, 'int', format);
  if (typeof self === 'bigint') return formatNumber(self, 'long', format);
  if (self instanceof CsDouble) return format ? formatNumber(self.v, 'double', format) : formatDouble(self.v);
  if (self instanceof CsDecimal) return formatDecimal(self, format);
  return toDotNetStringRt(rt, self);
};

export function numericConvert(target: 'int' | 'long' | 'double' | 'decimal') {
  return (v: unknown, explicit: boolean): unknown => {
    if (v instanceof CsEnum) {
      if (target === 'decimal') return CsDecimal.fromInteger(v.value);
      return target === 'long' ? BigInt(v.value) : target === 'int' ? v.value : new CsDouble(v.value);
    }
    const isNum =
      typeof v === 'number' ||
      typeof v === 'bigint' ||
      v instanceof CsDouble ||
      v instanceof CsDecimal ||
      v instanceof CsChar;
    if (!isNum) {
      // (int)token: a conversion the value's own type declares, explicit only.
      const declared = declaredExplicitConversion(v);
      if (!declared || !explicit) throw invalidCast(typeName(v), target);
      return declared(v, target);
    }
    switch (target) {
      case 'int':
        if (!explicit && typeof v !== 'number' && !(v instanceof CsChar))
          throw invalidCast(typeName(v), 'System.Int32');
        return toInt32(v);
      case 'long':
        if (!explicit && (v instanceof CsDouble || v instanceof CsDecimal))
          throw invalidCast(typeName(v), 'System.Int64');
        return toInt64(v);
      case 'double':
        return new CsDouble(asNumber(v));
      default:
        return asDecimal(v);
    }
  };
}

export const numberMethods = { ToString: numberToString, CompareTo: compareTo };

export const Int32Type = defineType({
  name: 'Int32',
  namespace: 'System',
  aliases: ['int', 'short', 'ushort', 'sbyte', 'Int16', 'UInt16', 'SByte', 'System.Int16'],
  test: (v) => typeof v === 'number',
  defaultValue: 0,
  convert: numericConvert('int'),
  methods: numberMethods,
  staticProps: { MaxValue: prop(() => 2147483647), MinValue: prop(() => -2147483648) },
  staticMethods: {
    Parse: (_rt, _s, args) => parseInt32(str(args[0], 's')),
    TryParse: tryParse(parseInt32, 0),
  },
});
// byte is its own type (not an Int32 alias) so that `new byte[n]` makes a Buffer.
defineType({
  name: 'Byte',
  namespace: 'System',
  aliases: ['byte'],
  test: (v) => typeof v === 'number' && v >= 0 && v <= 255,
  defaultValue: 0,
  convert: (v, explicit) => (numericConvert('int')(v, explicit) as number) & 255,
  methods: numberMethods,
  staticProps: { MaxValue: prop(() => 255), MinValue: prop(() => 0) },
  staticMethods: { Parse: (_rt, _s, args) => parseInt32(str(args[0], 's')) & 255 },
});

export const Int64Type = defineType({
  name: 'Int64',
  namespace: 'System',
  aliases: ['long', 'uint', 'ulong', 'UInt32', 'UInt64'],
  test: (v) => typeof v === 'bigint',
  defaultValue: 0n,
  convert: numericConvert('long'),
  methods: numberMethods,
  staticProps: { MaxValue: prop(() => 9223372036854775807n), MinValue: prop(() => -9223372036854775808n) },
  staticMethods: {
    Parse: (_rt, _s, args) => parseInt64(str(args[0], 's')),
    TryParse: tryParse(parseInt64, 0n),
  },
});

export const DoubleType = defineType({
  name: 'Double',
  namespace: 'System',
  aliases: ['double', 'float', 'Single'],
  classes: [CsDouble],
  defaultValue: new CsDouble(0),
  convert: numericConvert('double'),
  methods: numberMethods,
  staticProps: {
    MaxValue: prop(() => new CsDouble(Number.MAX_VALUE)),
    MinValue: prop(() => new CsDouble(-Number.MAX_VALUE)),
    NaN: prop(() => new CsDouble(Number.NaN)),
    PositiveInfinity: prop(() => new CsDouble(Number.POSITIVE_INFINITY)),
    NegativeInfinity: prop(() => new CsDouble(Number.NEGATIVE_INFINITY)),
    Epsilon: prop(() => new CsDouble(Number.MIN_VALUE)),
  },
  staticMethods: {
    Parse: (_rt, _s, args) => new CsDouble(parseDouble(str(args[0], 's'))),
    TryParse: tryParse((s) => new CsDouble(parseDouble(s)), new CsDouble(0)),
    IsNaN: (_rt, _s, args) => Number.isNaN(asNumber(args[0])),
    IsInfinity: (_rt, _s, args) => !Number.isFinite(asNumber(args[0])) && !Number.isNaN(asNumber(args[0])),
  },
});

export function roundHalfEven(v: number, digits: number): number {
  const f = 10 ** digits;
  const x = v * f;
  const r = Math.round(x);
  const isHalf = Math.abs(x % 1) === 0.5;
  const even = isHalf ? (r % 2 === 0 ? r : r - 1) : r;
  return even / f;
}

const charArg = (v: unknown, i?: unknown): number => {
  if (v instanceof CsChar) return v.code;
  if (typeof v === 'string') return v.charCodeAt(i === undefined ? 0 : int(i));
  throw argError(`expected a char, got '${typeName(v)}'`);
};
const charTest =
  (re: RegExp): Method =>
  (_rt, _s, args) =>
    re.test(String.fromCharCode(charArg(args[0], args[1])));

export const CharType = defineType({
  name: 'Char',
  namespace: 'System',
  aliases: ['char'],
  classes: [CsChar],
  defaultValue: new CsChar(0),
  convert: (v, explicit) => {
    if (v instanceof CsChar) return v;
    if (explicit && typeof v === 'number') return new CsChar(v & 0xffff);
    const declared = explicit ? declaredExplicitConversion(v) : undefined;
    if (declared) return new CsChar(String(declared(v, 'string')).charCodeAt(0));
    throw invalidCast(typeName(v), 'System.Char');
  },
  methods: {
    ToString: (_rt, self: CsChar) => String.fromCharCode(self.code),
    CompareTo: compareTo,
  },
  staticMethods: {
    IsDigit: charTest(/^\d$/u),
    IsLetter: charTest(/^\p{L}$/u),
    IsLetterOrDigit: charTest(/^[\p{L}\p{Nd}]$/u),
    IsWhiteSpace: charTest(/^\s$/u),
    IsUpper: charTest(/^\p{Lu}$/u),
    IsLower: charTest(/^\p{Ll}$/u),
    IsPunctuation: charTest(/^\p{P}$/u),
    IsNumber: charTest(/^\p{N}$/u),
    ToUpper: (_rt, _s, args) => new CsChar(String.fromCharCode(charArg(args[0])).toUpperCase().charCodeAt(0)),
    ToLower: (_rt, _s, args) => new CsChar(String.fromCharCode(charArg(args[0])).toLowerCase().charCodeAt(0)),
    Parse: (_rt, _s, args) => {
      const s = str(args[0]);
      if (s.length !== 1) throw formatError('String must be exactly one character long.');
      return new CsChar(s.charCodeAt(0));
    },
  },
});

export const DelegateType = defineType({
  name: 'Delegate',
  namespace: 'System',
  aliases: ['Func`1', 'Func`2', 'Func`3', 'Func`4', 'Action', 'Action`1', 'Action`2', 'Predicate`1'],
  test: (v) => typeof v === 'function',
  methods: {
    Invoke: (_rt, self: (...a: unknown[]) => unknown, args) => self(...args),
  },
});

export const AnonymousType = defineType({
  name: '<anonymous>',
  classes: [CsAnon],
  methods: {
    ToString: (rt, self: CsAnon) =>
      `{ ${[...self.entries()].map(([k, v]) => `${k} = ${toDotNetStringRt(rt, v)}`).join(', ')} }`,
  },
});

export const EnumType = defineType({
  name: 'Enum',
  namespace: 'System',
  classes: [CsEnum],
  methods: {
    ToString: (_rt, self: CsEnum) => self.name,
    HasFlag: (_rt, self: CsEnum, args) => {
      const f = args[0] as CsEnum;
      return (self.value & f.value) === f.value;
    },
    GetHashCode: (_rt, self: CsEnum) => self.value,
  },
  // Enum.Parse<TEnum>(value[, ignoreCase]) and Enum.TryParse<TEnum>(value[, ignoreCase], out result): the generic
  // forms, as `typeof` (the non-generic forms' first argument) is not part of policy expressions here.
  staticMethods: {
    Parse: (_rt, _s, args, typeArgs) =>
      parseEnum(enumTypeArg(typeArgs), str(args[0], 'value'), args[1] === true),
    TryParse: (_rt, _s, args, typeArgs) => {
      const out = args[args.length - 1];
      const type = enumTypeArg(typeArgs);
      try {
        setOut(out, parseEnum(type, str(args[0], 'value'), args.length > 2 && args[1] === true));
        return true;
      } catch (e) {
        if (!(e instanceof CsException)) throw e;
        setOut(out, type.defaultValue);
        return false;
      }
    },
  },
});

function enumTypeArg(typeArgs: readonly CsType[]): TypeInfo {
  const info = typeArgs[0]?.info;
  const sample = info?.defaultValue;
  if (!info || !(sample instanceof CsEnum))
    throw argError('Enum.Parse and Enum.TryParse need an enum type: Enum.Parse<T>(value)');
  return info;
}

/** Names (comma-separated for flags) or a number, as Enum.Parse reads them. */
function parseEnum(type: TypeInfo, text: string, ignoreCase: boolean): CsEnum {
  const sample = type.defaultValue as CsEnum;
  const trimmed = text.trim();
  if (/^[+-]?\d+$/.test(trimmed)) return new CsEnum(sample.enumName, Number(trimmed), sample.names);
  let value = 0;
  for (const part of trimmed.split(',')) {
    const name = part.trim();
    const match = [...type.staticProps.entries()].find(([n]) =>
      ignoreCase ? n.toLowerCase() === name.toLowerCase() : n === name,
    );
    const member = match?.[1].constant;
    if (!(member instanceof CsEnum)) throw argError(`Requested value '${text}' was not found.`);
    value |= member.value;
  }
  return new CsEnum(sample.enumName, value, sample.names);
}

const EXCEPTION_TYPES = [
  'Exception',
  'SystemException',
  'ArgumentException',
  'ArgumentNullException',
  'ArgumentOutOfRangeException',
  'InvalidOperationException',
  'FormatException',
  'NullReferenceException',
  'InvalidCastException',
  'KeyNotFoundException',
  'IndexOutOfRangeException',
  'DivideByZeroException',
  'OverflowException',
  'ArithmeticException',
  'NotSupportedException',
  'NotImplementedException',
  'TimeoutException',
  'UriFormatException',
  'JsonException',
  'JsonReaderException',
  'JsonSerializationException',
  'XmlException',
  'CryptographicException',
  'RegexMatchTimeoutException',
  'ObjectDisposedException',
  'TimeZoneNotFoundException',
];

const exceptionBase = defineType({
  name: 'Exception',
  namespace: 'System',
  test: (v) => v instanceof CsException,
  classes: [CsException],
  construct: (_rt, args) =>
    new CsException(
      'Exception',
      args.length ? String(str(args[0])) : "Exception of type 'System.Exception' was thrown.",
      (args[1] as CsException) ?? null,
    ),
  props: {
    Message: prop((self: CsException) => self.message),
    InnerException: prop((self: CsException) => self.inner),
    StackTrace: prop(() => ''),
    Source: prop(() => 'Portcullis'),
  },
  methods: {
    ToString: (_rt, self: CsException) => `System.${self.type}: ${self.message}`,
  },
});

for (const name of EXCEPTION_TYPES.slice(1)) {
  defineType({
    name,
    namespace: 'System',
    base: exceptionBase,
    test: (v) => v instanceof CsException && (v.type === name || exceptionChain(v.type).includes(name)),
    construct: (_rt, args) =>
      new CsException(name, args.length ? str(args[0]) : `Exception of type '${name}' was thrown.`),
  });
}

// Mirrors compile/support.ts's hierarchy for `is`/`catch` tests written against exception types.
function exceptionChain(t: string): string[] {
  const chain: string[] = [];
  const parents: Record<string, string> = {
    ArgumentNullException: 'ArgumentException',
    ArgumentOutOfRangeException: 'ArgumentException',
    UriFormatException: 'FormatException',
    JsonReaderException: 'JsonException',
    JsonSerializationException: 'JsonException',
    DivideByZeroException: 'ArithmeticException',
    OverflowException: 'ArithmeticException',
    ObjectDisposedException: 'InvalidOperationException',
  };
  for (let c = parents[t]; c; c = parents[c]) chain.push(c);
  return chain;
}

function NullableMembers_() {
  return {
    HasValue: prop((self) => self !== null && self !== undefined),
    Value: prop((self) => self),
  };
}

/** Nullable<T>-style helpers that work on any value: HasValue / Value / GetValueOrDefault for `int?` etc. */
export const NullableMembers = {
  HasValue: prop((self) => self !== null && self !== undefined),
  Value: prop((self) => self),
};

export function typeIs(type: CsType, v: unknown): boolean {
  return isInstance(type, v);
}

setPrimitiveTypes({
  string: StringType,
  int: Int32Type,
  bool: BooleanType,
  long: Int64Type,
  delegate: DelegateType,
  object: ObjectType,
});
