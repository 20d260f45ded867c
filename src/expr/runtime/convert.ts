/**
 * C# operators and conversions over the runtime representation (see values.ts): binary numeric promotion, int
 * 32-bit wrap-around, long 64-bit wrap-around, integer division, string concatenation, equality, ToString.
 */
import {
  argError,
  CsException,
  checkStringLength,
  findMethod,
  invalidCast,
  type Rt,
  typeName,
  typeOf,
} from './core.js';
import {
  CsDecimal,
  decAdd,
  decCompare,
  decDivide,
  decMultiply,
  decNegate,
  decRemainder,
  decSubtract,
  decTruncateToBigInt,
} from './decimal.js';
import { CsEnum } from './enum.js';
import { formatDouble } from './format-number.js';
import { CsChar, CsDateTime, CsDateTimeOffset, CsDouble, CsGuid, CsTimeSpan } from './values.js';

/** Numeric rank for binary promotion: 0 int, 1 long, 2 decimal, 3 double. -1 = not numeric. */
export function numRank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'bigint') return 1;
  if (v instanceof CsChar) return 0;
  if (v instanceof CsDouble) return 3;
  if (v instanceof CsDecimal) return 2;
  return -1;
}

export function asNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof CsDouble || v instanceof CsDecimal) return v.v;
  if (v instanceof CsChar) return v.code;
  throw invalidCast(typeName(v), 'System.Double');
}

/** An int, long, char or decimal as a decimal (exact); a double through (decimal)double's 15 digits. */
export function asDecimal(v: unknown): CsDecimal {
  if (v instanceof CsDecimal) return v;
  if (typeof v === 'number') return CsDecimal.fromInteger(v);
  if (typeof v === 'bigint') return CsDecimal.fromInteger(v);
  if (v instanceof CsChar) return CsDecimal.fromInteger(v.code);
  if (v instanceof CsDouble) return CsDecimal.fromNumber(v.v);
  throw invalidCast(typeName(v), 'System.Decimal');
}

const DECIMAL_OPS: Record<string, (a: CsDecimal, b: CsDecimal) => CsDecimal> = {
  '+': decAdd,
  '-': decSubtract,
  '*': decMultiply,
  '/': decDivide,
  '%': decRemainder,
};

export function asBig(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  if (v instanceof CsChar) return BigInt(v.code);
  throw invalidCast(typeName(v), 'System.Int64');
}

const divideByZero = (): CsException =>
  new CsException('DivideByZeroException', 'Attempted to divide by zero.');

function arith(op: string, a: unknown, b: unknown): unknown {
  const ra = numRank(a);
  const rb = numRank(b);
  if (ra < 0 || rb < 0) {
    throw new CsException(
      'InvalidOperationException',
      `Operator '${op}' cannot be applied to operands of type '${typeName(a)}' and '${typeName(b)}'`,
    );
  }
  const r = Math.max(ra, rb);
  if (r === 0) {
    const x = asNumber(a);
    const y = asNumber(b);
    switch (op) {
      case '+':
        return (x + y) | 0;
      case '-':
        return (x - y) | 0;
      case '*':
        return Math.imul(x, y);
      case '/':
        if (y === 0) throw divideByZero();
        return (x / y) | 0;
      case '%':
        if (y === 0) throw divideByZero();
        return (x % y) | 0;
    }
  } else if (r === 1) {
    const x = asBig(a);
    const y = asBig(b);
    switch (op) {
      case '+':
        return BigInt.asIntN(64, x + y);
      case '-':
        return BigInt.asIntN(64, x - y);
      case '*':
        return BigInt.asIntN(64, x * y);
      case '/':
        if (y === 0n) throw divideByZero();
        return BigInt.asIntN(64, x / y);
      case '%':
        if (y === 0n) throw divideByZero();
        return x % y;
    }
  } else if (r === 2) {
    const decimalOp = DECIMAL_OPS[op];
    if (decimalOp) return decimalOp(asDecimal(a), asDecimal(b));
  } else {
    const x = asNumber(a);
    const y = asNumber(b);
    let v: number;
    switch (op) {
      case '+':
        v = x + y;
        break;
      case '-':
        v = x - y;
        break;
      case '*':
        v = x * y;
        break;
      case '/':
        v = x / y;
        break;
      default:
        v = x % y;
    }
    return new CsDouble(v);
  }
  throw new CsException('InvalidOperationException', `unknown operator ${op}`);
}

export function toDotNetStringRt(rt: Rt | null, v: unknown): string {
  if (v === null || v === undefined) return '';
  switch (typeof v) {
    case 'string':
      return v;
    case 'number':
      return String(v);
    case 'boolean':
      return v ? 'True' : 'False';
    case 'bigint':
      return v.toString();
    default:
      break;
  }
  if (v instanceof CsDouble) return formatDouble(v.v);
  if (v instanceof CsDecimal) return v.toString();
  if (v instanceof CsChar) return String.fromCharCode(v.code);
  if (v instanceof CsGuid) return v.value;
  const m = findMethod(typeOf(v), 'ToString');
  if (m && rt) return String(m(rt, v, [], []));
  if (m) return String(m(STANDALONE_RT, v, [], []));
  return typeOf(v).fullName;
}

// ToString outside an evaluation (the runner rendering a variable) still needs limits for the shared helpers.
const STANDALONE_RT: Rt = {
  get ctx(): never {
    throw new TypeError('no context outside an evaluation');
  },
  limits: {
    maxSourceLength: Number.MAX_SAFE_INTEGER,
    maxAstDepth: Number.MAX_SAFE_INTEGER,
    maxSteps: Number.MAX_SAFE_INTEGER,
    maxStringLength: Number.MAX_SAFE_INTEGER,
    maxCollectionSize: Number.MAX_SAFE_INTEGER,
    maxRegexInputLength: Number.MAX_SAFE_INTEGER,
    maxRegexMilliseconds: Number.MAX_SAFE_INTEGER,
  },
  steps: 0,
  regexMilliseconds: 0,
};

/** Convert.ToString(value) / value.ToString() as .NET renders it (invariant culture); null → "". */
export function toDotNetString(v: unknown): string {
  return toDotNetStringRt(null, v);
}

export function add(rt: Rt, a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') return (a + b) | 0;
  if (typeof a === 'object' && a !== null) {
    const declared = typeOf(a).plus;
    if (declared) return declared(rt, a, b);
  }
  if (typeof a === 'string' || typeof b === 'string') {
    const left = toDotNetStringRt(rt, a);
    const right = toDotNetStringRt(rt, b);
    checkStringLength(rt, left.length + right.length);
    return left + right;
  }
  if (a === null || b === null || a === undefined || b === undefined) return null; // lifted operator
  if (a instanceof CsDateTime && b instanceof CsTimeSpan) return new CsDateTime(a.ticks + b.ticks, a.kind);
  if (a instanceof CsDateTimeOffset && b instanceof CsTimeSpan)
    return new CsDateTimeOffset(a.ticks + b.ticks, a.offsetMinutes);
  if (a instanceof CsTimeSpan && b instanceof CsTimeSpan) return new CsTimeSpan(a.ticks + b.ticks);
  if (a instanceof CsChar && b instanceof CsChar) return a.code + b.code;
  if (typeof a === 'function' || typeof b === 'function') {
    throw new CsException('InvalidOperationException', 'delegate combination is not supported');
  }
  return arith('+', a, b);
}

export function subtract(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') return (a - b) | 0;
  if (a === null || b === null || a === undefined || b === undefined) return null;
  if (a instanceof CsDateTime && b instanceof CsDateTime) return new CsTimeSpan(a.ticks - b.ticks);
  if (a instanceof CsDateTime && b instanceof CsTimeSpan) return new CsDateTime(a.ticks - b.ticks, a.kind);
  if (a instanceof CsDateTimeOffset && b instanceof CsDateTimeOffset)
    return new CsTimeSpan(a.utcTicks - b.utcTicks);
  if (a instanceof CsDateTimeOffset && b instanceof CsTimeSpan)
    return new CsDateTimeOffset(a.ticks - b.ticks, a.offsetMinutes);
  if (a instanceof CsTimeSpan && b instanceof CsTimeSpan) return new CsTimeSpan(a.ticks - b.ticks);
  return arith('-', a, b);
}

export function multiply(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') return Math.imul(a, b);
  if (a === null || b === null || a === undefined || b === undefined) return null;
  return arith('*', a, b);
}

export function divide(a: unknown, b: unknown): unknown {
  if (a === null || b === null || a === undefined || b === undefined) return null;
  return arith('/', a, b);
}

export function remainder(a: unknown, b: unknown): unknown {
  if (a === null || b === null || a === undefined || b === undefined) return null;
  return arith('%', a, b);
}

export function negate(a: unknown): unknown {
  if (typeof a === 'number') return -a | 0;
  if (typeof a === 'bigint') return BigInt.asIntN(64, -a);
  if (a instanceof CsDouble) return new CsDouble(-a.v);
  if (a instanceof CsDecimal) return decNegate(a);
  if (a instanceof CsChar) return -a.code;
  if (a instanceof CsTimeSpan) return new CsTimeSpan(-a.ticks);
  if (a === null || a === undefined) return null;
  throw new CsException(
    'InvalidOperationException',
    `Operator '-' cannot be applied to operand of type '${typeName(a)}'`,
  );
}

/** Ordering comparison: negative, zero, positive. Strings compare ordinally (String.CompareOrdinal). */
export function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const ra = numRank(a);
  const rb = numRank(b);
  if (ra >= 0 && rb >= 0) {
    if (ra <= 1 && rb <= 1) {
      const x = asBig(a);
      const y = asBig(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    if (ra <= 2 && rb <= 2) return decCompare(asDecimal(a), asDecimal(b));
    const x = asNumber(a);
    const y = asNumber(b);
    return x < y ? -1 : x > y ? 1 : x === y ? 0 : Number.NaN;
  }
  if (a instanceof CsDateTime && b instanceof CsDateTime) return cmpBig(a.ticks, b.ticks);
  if (a instanceof CsDateTimeOffset && b instanceof CsDateTimeOffset) return cmpBig(a.utcTicks, b.utcTicks);
  if (a instanceof CsTimeSpan && b instanceof CsTimeSpan) return cmpBig(a.ticks, b.ticks);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof CsGuid && b instanceof CsGuid) return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  throw argError(`Cannot compare values of type '${typeName(a)}' and '${typeName(b)}'`);
}

const cmpBig = (x: bigint, y: bigint): number => (x < y ? -1 : x > y ? 1 : 0);

/**
 * C# `==` as policies use it: value equality for strings, numbers, chars, Guid, DateTime, TimeSpan, enums, and for
 * library types that declare valueEquals (JValue).
 */
export function equals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  const ta = typeof a;
  if (ta === 'string' || ta === 'boolean') {
    if (typeof b === 'object') return typeOf(b).valueEquals?.(b, a) ?? false;
    return false;
  }
  const ra = numRank(a);
  const rb = numRank(b);
  if (ra >= 0 && rb >= 0) return compare(a, b) === 0;
  if (a instanceof CsGuid && b instanceof CsGuid) return a.value === b.value;
  if (a instanceof CsDateTime && b instanceof CsDateTime) return a.ticks === b.ticks;
  if (a instanceof CsDateTimeOffset && b instanceof CsDateTimeOffset) return a.utcTicks === b.utcTicks;
  if (a instanceof CsTimeSpan && b instanceof CsTimeSpan) return a.ticks === b.ticks;
  if (a instanceof CsEnum && b instanceof CsEnum) return a.enumName === b.enumName && a.value === b.value;
  return typeOf(a).valueEquals?.(a, b) ?? false;
}

/** Truthiness is not C#: conditions must be bool. Nullable<bool> null is an error too. */
export function toBoolean(v: unknown): boolean {
  if (typeof v === 'boolean') return v;
  if (v === null || v === undefined) {
    throw new CsException(
      'InvalidOperationException',
      'Nullable object must have a value (a condition was null)',
    );
  }
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'true') return true;
    if (t === 'false') return false;
  }
  throw invalidCast(typeName(v), 'System.Boolean');
}

/** Explicit (int) conversion of a numeric value; strings are not convertible by a cast. */
export function toInt32(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(BigInt.asIntN(32, v));
  if (v instanceof CsChar) return v.code;
  if (v instanceof CsDecimal) {
    const t = decTruncateToBigInt(v);
    if (t > 2147483647n || t < -2147483648n) {
      throw new CsException('OverflowException', 'Value was either too large or too small for an Int32.');
    }
    return Number(t);
  }
  if (v instanceof CsDouble) {
    if (!Number.isFinite(v.v)) return -2147483648;
    return Number(BigInt.asIntN(32, BigInt(Math.trunc(v.v))));
  }
  throw invalidCast(typeName(v), 'System.Int32');
}

export function toInt64(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(v);
  if (v instanceof CsChar) return BigInt(v.code);
  if (v instanceof CsDecimal) {
    const t = decTruncateToBigInt(v);
    if (t > 9223372036854775807n || t < -9223372036854775808n) {
      throw new CsException('OverflowException', 'Value was either too large or too small for an Int64.');
    }
    return t;
  }
  if (v instanceof CsDouble) {
    if (!Number.isFinite(v.v)) return -9223372036854775808n;
    return BigInt.asIntN(64, BigInt(Math.trunc(v.v)));
  }
  throw invalidCast(typeName(v), 'System.Int64');
}
