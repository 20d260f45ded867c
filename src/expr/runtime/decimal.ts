/**
 * System.Decimal as .NET defines it: a 96-bit integer mantissa and a scale of 0–28 (value = mantissa / 10^scale),
 * so 28–29 significant digits, exact decimal fractions (0.1m + 0.2m == 0.3m) and a scale that is kept (1.50m prints
 * "1.50", 1.5m * 2m is 3.0m). The rules follow the .NET reference implementation (System.Decimal, decimal.DecCalc):
 * results too wide for 96 bits or 28 fraction digits lose fraction digits with round-half-even, and a result whose
 * integer part does not fit throws OverflowException. BigInt does the arithmetic, so no precision is lost on the way.
 */
import { CsException, formatError } from './core.js';

/** 2^96: the mantissa's bound. decimal.MaxValue is 2^96 - 1 = 79228162514264337593543950335. */
const MANTISSA_LIMIT = 1n << 96n;
export const MAX_SCALE = 28;

const POW10: bigint[] = [1n];
export function pow10(n: number): bigint {
  while (POW10.length <= n) POW10.push(POW10[POW10.length - 1]! * 10n);
  return POW10[n]!;
}

/** .NET's MidpointRounding values, as its enum numbers them. */
export const Rounding = {
  ToEven: 0,
  AwayFromZero: 1,
  ToZero: 2,
  ToNegativeInfinity: 3,
  ToPositiveInfinity: 4,
} as const;

const overflow = (): CsException =>
  new CsException('OverflowException', 'Value was either too large or too small for a Decimal.');

export class CsDecimal {
  /** Use the factories: the constructor trusts its caller that the pair is in range. */
  constructor(
    readonly mantissa: bigint,
    readonly scale: number,
  ) {}

  /** Exact conversion from an integer (int, long, ulong): always fits. */
  static fromInteger(n: number | bigint): CsDecimal {
    return new CsDecimal(BigInt(n), 0);
  }

  /**
   * (decimal)double: .NET keeps at most 15 significant digits and drops trailing zeros, so (decimal)0.1 is 0.1 and
   * (decimal)(1.0 / 3) is 0.333333333333333. NaN, infinities and magnitudes past decimal.MaxValue overflow.
   */
  static fromNumber(n: number): CsDecimal {
    if (!Number.isFinite(n) || Math.abs(n) >= 7.922816251426434e28) throw overflow();
    if (Number.isInteger(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER && Math.abs(n) < 1e15)
      return new CsDecimal(BigInt(n), 0);
    const parsed = parseDecimalText(n.toPrecision(15), true);
    if (!parsed) throw overflow();
    return stripTrailingZeros(parsed);
  }

  /** An approximation as a double, for the members that take double (Math.Sqrt(d), (double)d). */
  get v(): number {
    return Number(this.toString());
  }

  isZero(): boolean {
    return this.mantissa === 0n;
  }

  /** decimal.ToString() (invariant): every digit of the scale, so 1.50m is "1.50". */
  toString(): string {
    const neg = this.mantissa < 0n;
    const digits = (neg ? -this.mantissa : this.mantissa).toString().padStart(this.scale + 1, '0');
    const body =
      this.scale === 0
        ? digits
        : `${digits.slice(0, -this.scale)}.${digits.slice(digits.length - this.scale)}`;
    return neg ? `-${body}` : body;
  }
}

export const DECIMAL_ZERO = new CsDecimal(0n, 0);
export const DECIMAL_ONE = new CsDecimal(1n, 0);
export const DECIMAL_MINUS_ONE = new CsDecimal(-1n, 0);
export const DECIMAL_MAX = new CsDecimal(MANTISSA_LIMIT - 1n, 0);
export const DECIMAL_MIN = new CsDecimal(-(MANTISSA_LIMIT - 1n), 0);

/** n / d rounded to an integer by `mode`. */
export function divRound(n: bigint, d: bigint, mode: number): bigint {
  if (d < 0n) {
    n = -n;
    d = -d;
  }
  const q = n / d; // truncates toward zero
  const r = n % d;
  if (r === 0n) return q;
  const neg = n < 0n;
  const away = neg ? q - 1n : q + 1n;
  switch (mode) {
    case Rounding.ToZero:
      return q;
    case Rounding.ToNegativeInfinity:
      return neg ? away : q;
    case Rounding.ToPositiveInfinity:
      return neg ? q : away;
    default: {
      const twice = (r < 0n ? -r : r) * 2n;
      if (twice > d) return away;
      if (twice < d) return q;
      if (mode === Rounding.AwayFromZero) return away;
      return q % 2n === 0n ? q : away;
    }
  }
}

/** Brings a mantissa and scale into range, dropping fraction digits with round-half-even; overflows if it can't. */
export function fitDecimal(m: bigint, scale: number): CsDecimal {
  const abs = m < 0n ? -m : m;
  if (abs < MANTISSA_LIMIT && scale <= MAX_SCALE && scale >= 0) return new CsDecimal(m, scale);
  if (scale < 0) return fitDecimal(m * pow10(-scale), 0);
  let drop = Math.max(0, scale - MAX_SCALE);
  while (abs / pow10(drop) >= MANTISSA_LIMIT) drop++;
  for (; drop <= scale; drop++) {
    const r = divRound(m, pow10(drop), Rounding.ToEven);
    if ((r < 0n ? -r : r) < MANTISSA_LIMIT) return new CsDecimal(r, scale - drop);
  }
  throw overflow();
}

/** Both operands at the larger of their scales. */
function align(a: CsDecimal, b: CsDecimal): [bigint, bigint, number] {
  if (a.scale === b.scale) return [a.mantissa, b.mantissa, a.scale];
  if (a.scale > b.scale) return [a.mantissa, b.mantissa * pow10(a.scale - b.scale), a.scale];
  return [a.mantissa * pow10(b.scale - a.scale), b.mantissa, b.scale];
}

export function decAdd(a: CsDecimal, b: CsDecimal): CsDecimal {
  const [x, y, s] = align(a, b);
  return fitDecimal(x + y, s);
}

export function decSubtract(a: CsDecimal, b: CsDecimal): CsDecimal {
  const [x, y, s] = align(a, b);
  return fitDecimal(x - y, s);
}

export function decMultiply(a: CsDecimal, b: CsDecimal): CsDecimal {
  return fitDecimal(a.mantissa * b.mantissa, a.scale + b.scale);
}

const divideByZero = (): CsException =>
  new CsException('DivideByZeroException', 'Attempted to divide by zero.');

/**
 * Division as decimal.DecCalc.VarDecDiv does it: the quotient at scale (a.scale - b.scale), extended one fraction
 * digit at a time while a remainder is left and the quotient still fits 96 bits and 28 digits, rounded half-even;
 * an exact quotient keeps the smallest such scale (1m / 4m is 0.25, 4.00m / 2m is 2.00), and never below 0.
 */
export function decDivide(a: CsDecimal, b: CsDecimal): CsDecimal {
  if (b.mantissa === 0n) throw divideByZero();
  let num = a.mantissa;
  let scale = a.scale - b.scale;
  if (scale < 0) {
    num *= pow10(-scale);
    scale = 0;
  }
  const den = b.mantissa;
  let q = num / den;
  let r = num % den;
  if ((q < 0n ? -q : q) >= MANTISSA_LIMIT) throw overflow();
  while (r !== 0n && scale < MAX_SCALE) {
    const next = (num * 10n) / den;
    if ((next < 0n ? -next : next) >= MANTISSA_LIMIT) break;
    num *= 10n;
    q = next;
    r = num % den;
    scale++;
  }
  if (r === 0n) return new CsDecimal(q, scale);
  return fitDecimal(divRound(num, den, Rounding.ToEven), scale);
}

/** a % b: a - truncate(a / b) * b, at the larger scale, with the dividend's sign. */
export function decRemainder(a: CsDecimal, b: CsDecimal): CsDecimal {
  if (b.mantissa === 0n) throw divideByZero();
  const [x, y, s] = align(a, b);
  return fitDecimal(x % y, s);
}

export function decNegate(a: CsDecimal): CsDecimal {
  return new CsDecimal(-a.mantissa, a.scale);
}

export function decCompare(a: CsDecimal, b: CsDecimal): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Math.Round(d, decimals, mode) / decimal.Round: the scale becomes min(scale, decimals). */
export function decRound(a: CsDecimal, decimals: number, mode: number): CsDecimal {
  if (decimals < 0 || decimals > MAX_SCALE) {
    throw new CsException(
      'ArgumentOutOfRangeException',
      'Decimal can only round to between 0 and 28 digits of precision.',
    );
  }
  if (a.scale <= decimals) return a;
  return new CsDecimal(divRound(a.mantissa, pow10(a.scale - decimals), mode), decimals);
}

/** The integral part as a bigint, truncated toward zero ((int)d, (long)d). */
export function decTruncateToBigInt(a: CsDecimal): bigint {
  return a.mantissa / pow10(a.scale);
}

/** The same value with no trailing fraction zeros (1.500m → 1.5m): equal values then have one form. */
export function stripTrailingZeros(a: CsDecimal): CsDecimal {
  let m = a.mantissa;
  let s = a.scale;
  while (s > 0 && m % 10n === 0n) {
    m /= 10n;
    s--;
  }
  return s === a.scale ? a : new CsDecimal(m, s);
}

const NUMBER_STYLE = /^\s*([+-]?)(\d*(?:,\d+)*)(?:\.(\d*))?\s*$/;
const LITERAL_STYLE = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/;

/**
 * Decimal text to a decimal: decimal.Parse's NumberStyles.Number (sign, digits with thousands separators, a point;
 * no exponent) or, with `exponent`, a C# literal's form (1.5e3). Extra fraction digits round half-even, as the
 * .NET parser does past 28–29 significant digits. Returns null when the text is not a number.
 */
export function parseDecimalText(text: string, exponent = false): CsDecimal | null {
  const m = (exponent ? LITERAL_STYLE : NUMBER_STYLE).exec(text);
  if (!m) return null;
  const intDigits = (m[2] ?? '').replace(/,/g, '');
  const fracDigits = m[3] ?? '';
  if (intDigits === '' && fracDigits === '') return null;
  let mantissa = BigInt(`${intDigits}${fracDigits}` || '0');
  let scale = fracDigits.length - (exponent && m[4] ? Number(m[4]) : 0);
  if (m[1] === '-') mantissa = -mantissa;
  if (scale > 60) {
    // Far more fraction digits than a decimal holds: cut to 60 first so the BigInt work stays small.
    mantissa = divRound(mantissa, pow10(scale - 60), Rounding.ToEven);
    scale = 60;
  }
  return fitDecimal(mantissa, scale);
}

/** decimal.Parse(s): FormatException for text that is not a number, OverflowException past the range. */
export function parseDecimal(s: string): CsDecimal {
  const d = parseDecimalText(s);
  if (!d) throw formatError(`The input string '${s}' was not in a correct format.`);
  return d;
}
