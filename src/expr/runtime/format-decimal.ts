/**
 * decimal.ToString(format) in the invariant culture, computed on the exact digits (never through a double, which
 * would lose the 16th digit onward). .NET rounds formatted decimals half away from zero.
 */
import { formatError } from './core.js';
import { type CsDecimal, divRound, pow10, Rounding } from './decimal.js';
import { customFormatOperand, type FormatOperand, groupThousands } from './format-number.js';

/** An unbounded decimal (mantissa / 10^scale): formatting may scale past the 96-bit range (P on a large value). */
interface Exact {
  readonly m: bigint;
  readonly scale: number;
}

/** |x| with exactly `decimals` fraction digits, rounded half away from zero. */
function fixedAbs(x: Exact, decimals: number): string {
  let m = x.m < 0n ? -x.m : x.m;
  if (decimals < x.scale) m = divRound(m, pow10(x.scale - decimals), Rounding.AwayFromZero);
  else m *= pow10(decimals - x.scale);
  const digits = m.toString().padStart(decimals + 1, '0');
  return decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(digits.length - decimals)}`;
}

function shift(x: Exact, power: number): Exact {
  return power >= 0 ? { m: x.m * pow10(power), scale: x.scale } : { m: x.m, scale: x.scale - power };
}

function operand(x: Exact): FormatOperand {
  return {
    negative: x.m < 0n,
    zero: x.m === 0n,
    shifted: (power) => operand(shift(x, power)),
    negated: () => operand({ m: -x.m, scale: x.scale }),
    fixedAbs: (decimals) => fixedAbs(x, decimals),
  };
}

const signed = (x: Exact, body: string): string => (x.m < 0n && /[1-9]/.test(body) ? `-${body}` : body);

function grouped(body: string): string {
  const [i, f] = body.split('.') as [string, string | undefined];
  return groupThousands(i) + (f !== undefined ? `.${f}` : '');
}

/** Significant digits and the decimal exponent of the first one (123.4 → "1234", 2), rounded to `precision`. */
function significant(x: Exact, precision: number | undefined): { digits: string; exponent: number } {
  let m = x.m < 0n ? -x.m : x.m;
  if (m === 0n) return { digits: '0', exponent: 0 };
  let digits = m.toString();
  let exponent = digits.length - 1 - x.scale;
  if (precision !== undefined && digits.length > precision) {
    m = divRound(m, pow10(digits.length - precision), Rounding.AwayFromZero);
    const rounded = m.toString();
    if (rounded.length > precision) exponent++; // 999 → 1000
    digits = rounded.slice(0, precision);
  }
  return { digits, exponent };
}

function scientific(digits: string, exponent: number, letter: string, minExponentDigits: number): string {
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  const e = Math.abs(exponent).toString().padStart(minExponentDigits, '0');
  return `${mantissa}${letter}${exponent < 0 ? '-' : '+'}${e}`;
}

/** "G" with a precision: that many significant digits, trailing zeros dropped, E notation when it is shorter. */
function general(x: Exact, precision: number, letter: string): string {
  const { digits, exponent } = significant(x, precision);
  const trimmed = digits.replace(/0+$/, '') || '0';
  if (exponent >= precision || exponent < -5) return signed(x, scientific(trimmed, exponent, letter, 2));
  const body =
    exponent >= 0
      ? trimmed.length > exponent + 1
        ? `${trimmed.slice(0, exponent + 1)}.${trimmed.slice(exponent + 1)}`
        : trimmed + '0'.repeat(exponent + 1 - trimmed.length)
      : `0.${'0'.repeat(-exponent - 1)}${trimmed}`;
  return signed(x, body);
}

function standard(d: CsDecimal, spec: string, precision: number | undefined): string {
  const x: Exact = { m: d.mantissa, scale: d.scale };
  switch (spec) {
    case 'F':
    case 'f':
      return signed(x, fixedAbs(x, precision ?? 2));
    case 'N':
    case 'n':
      return signed(x, grouped(fixedAbs(x, precision ?? 2)));
    case 'P':
    case 'p':
      return `${signed(x, grouped(fixedAbs(shift(x, 2), precision ?? 2)))} %`;
    case 'C':
    case 'c': {
      const body = grouped(fixedAbs(x, precision ?? 2));
      return x.m < 0n && /[1-9]/.test(body) ? `-¤${body}` : `¤${body}`;
    }
    case 'E':
    case 'e': {
      const p = precision ?? 6;
      const { digits, exponent } = significant(x, p + 1);
      return signed(x, scientific(digits.padEnd(p + 1, '0'), exponent, spec, 3));
    }
    case 'G':
    case 'g':
      // decimal's "G" without a precision is ToString(): every digit of the scale.
      return precision === undefined || precision === 0
        ? d.toString()
        : general(x, precision, spec === 'G' ? 'E' : 'e');
    default:
      // D, X and R are for integers and doubles only.
      throw formatError(`Format specifier '${spec}' was invalid.`);
  }
}

export function formatDecimal(d: CsDecimal, format: string | null | undefined): string {
  if (!format) return d.toString();
  const m = /^([A-Za-z])(\d{0,2})$/.exec(format);
  if (m) return standard(d, m[1]!, m[2] === '' ? undefined : Number(m[2]));
  return customFormatOperand(operand({ m: d.mantissa, scale: d.scale }), format);
}
