/** Runtime helpers the compiled closures call: casts, type tests, defaults, out-arguments, exceptions. */
import { BodyConsumedError } from '../context.js';
import {
  CsException,
  type CsType,
  invalidCast,
  nullRef,
  type Rt,
  TYPES_BY_NAME,
  typeName,
} from '../runtime/core.js';

/** An `out`/`ref` argument: library methods write results through it (int.TryParse(s, out var n)). */
export class OutRef {
  constructor(
    readonly get: () => unknown,
    readonly set: (v: unknown) => void,
  ) {}
}

/** An anonymous-type instance `new { a = 1, b = "x" }`: read-only properties in declaration order. */
export class CsAnon {
  readonly #values = new Map<string, unknown>();
  constructor(names: string[], values: unknown[]) {
    names.forEach((n, i) => {
      this.#values.set(n, values[i] ?? null);
    });
  }
  get(name: string): unknown {
    if (!this.#values.has(name)) {
      throw new CsException('MissingMemberException', `the anonymous type has no member '${name}'`);
    }
    return this.#values.get(name);
  }
  entries(): IterableIterator<[string, unknown]> {
    return this.#values.entries();
  }
}

export function isInstance(type: CsType, v: unknown): boolean {
  return v !== null && v !== undefined && type.info.test(v);
}

export function castValue(_rt: Rt, type: CsType, v: unknown): unknown {
  if (v === null || v === undefined) {
    if (!type.nullable && type.info.defaultValue !== null && type.arrayRank === 0) {
      throw nullRef(`the value cast to '${type.info.name}'`);
    }
    return null;
  }
  if (type.info.convert) return type.info.convert(v, true, type);
  if (type.info.test(v)) return v;
  throw invalidCast(typeName(v), type.info.fullName);
}

/** Assignment to a local declared with a type: widening numeric conversions (int → long/double/decimal), implicit
 *  JToken conversions; anything else is kept as is (C# would have rejected it at compile time). */
export function convertImplicit(type: CsType): (v: unknown) => unknown {
  const conv = type.info.convert;
  if (!conv) return (v) => v;
  return (v) => {
    if (v === null || v === undefined) return null;
    try {
      return conv(v, false, type);
    } catch (e) {
      if (e instanceof CsException && e.type === 'InvalidCastException') return v;
      throw e;
    }
  };
}

export function defaultOf(type: CsType): unknown {
  if (type.nullable || type.arrayRank > 0) return null;
  return type.info.defaultValue;
}

export function makeArray(elem: CsType | null, items: unknown[]): unknown {
  if (elem && elem.arrayRank === 0 && elem.info === TYPES_BY_NAME.get('byte')) {
    return Buffer.from(items.map((x) => Number(x) & 255));
  }
  return items;
}

const EXCEPTION_PARENTS: Record<string, string> = {
  ArgumentNullException: 'ArgumentException',
  ArgumentOutOfRangeException: 'ArgumentException',
  ArgumentException: 'SystemException',
  FormatException: 'SystemException',
  UriFormatException: 'FormatException',
  InvalidOperationException: 'SystemException',
  ObjectDisposedException: 'InvalidOperationException',
  TimeZoneNotFoundException: 'SystemException',
  NullReferenceException: 'SystemException',
  InvalidCastException: 'SystemException',
  KeyNotFoundException: 'SystemException',
  IndexOutOfRangeException: 'SystemException',
  DivideByZeroException: 'ArithmeticException',
  OverflowException: 'ArithmeticException',
  ArithmeticException: 'SystemException',
  NotSupportedException: 'SystemException',
  NotImplementedException: 'SystemException',
  JsonReaderException: 'JsonException',
  JsonSerializationException: 'JsonException',
  JsonException: 'Exception',
  XmlException: 'SystemException',
  RegexMatchTimeoutException: 'TimeoutException',
  TimeoutException: 'SystemException',
  CryptographicException: 'SystemException',
  MissingMemberException: 'SystemException',
  MissingMethodException: 'MissingMemberException',
  SystemException: 'Exception',
};

export function exceptionMatches(ex: CsException, wanted: string): boolean {
  for (let t: string | undefined = ex.type; t; t = EXCEPTION_PARENTS[t]) {
    if (t === wanted) return true;
  }
  return wanted === 'Exception';
}

/** A JavaScript error raised inside a library call becomes a .NET exception (its message only). */
export function wrapJsError(e: unknown): CsException {
  if (e instanceof CsException) return e;
  if (e instanceof BodyConsumedError) return new CsException('InvalidOperationException', e.message);
  if (e instanceof RangeError) return new CsException('OverflowException', e.message);
  if (e instanceof Error) return new CsException('Exception', e.message);
  return new CsException('Exception', String(e));
}
