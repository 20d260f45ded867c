/** .NET numeric formatting (invariant culture): ToString() round-trip output and the standard/custom formats. */
import { formatError } from './core.js';

/** double.ToString() in .NET Core 3.0+: shortest round-trip digits, E notation below 1E-04 and from 1E+15. */
export function formatDouble(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '∞';
  if (v === Number.NEGATIVE_INFINITY) return '-∞';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mant, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp >= 15 || exp < -4) {
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${mant}E${exp < 0 ? '-' : '+'}${e}`;
  }
  return fixedFromExponential(v);
}

/** Plain decimal notation of a double without exponent (shortest digits). */
function fixedFromExponential(v: number): string {
  const neg = v < 0;
  const [mant, expText] = Math.abs(v).toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const digits = mant.replace('.', '');
  let s: string;
  if (exp >= 0) {
    s =
      digits.length <= exp + 1
        ? digits + '0'.repeat(exp + 1 - digits.length)
        : `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  } else {
    s = `0.${'0'.repeat(-exp - 1)}${digits}`;
  }
  return neg ? `-${s}` : s;
}

export function groupThousands(intPart: string): string {
  return intPart.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Rounds half away from zero, as .NET's formatting does. */
function toFixedAway(v: number, decimals: number): string {
  const abs = Math.abs(v);
  let s = abs.toFixed(decimals);
  // toFixed rounds the binary value; correct the common x.5 cases to away-from-zero using a string check.
  const shifted = Number(`${abs}e${decimals}`);
  if (Number.isFinite(shifted) && Math.abs(shifted - Math.trunc(shifted) - 0.5) < 1e-9) {
    s = (Math.ceil(shifted) / 10 ** decimals).toFixed(decimals);
  }
  return (v < 0 && Number(s) !== 0 ? '-' : '') + s;
}

export type NumKind = 'int' | 'long' | 'double' | 'decimal';

/** value.ToString(format) for numbers. `v` is a number, or a bigint for long. */
export function formatNumber(v: number | bigint, kind: NumKind, format: string | null | undefined): string {
  if (!format) return typeof v === 'bigint' ? v.toString() : kind === 'double' ? formatDouble(v) : String(v);
  const m = /^([A-Za-z])(\d{0,2})$/.exec(format);
  if (m) return standardFormat(v, kind, m[1]!, m[2] === '' ? undefined : Number(m[2]));
  return customFormat(typeof v === 'bigint' ? Number(v) : v, format);
}

function standardFormat(
  v: number | bigint,
  kind: NumKind,
  spec: string,
  precision: number | undefined,
): string {
  const n = typeof v === 'bigint' ? Number(v) : v;
  const integral = kind === 'int' || kind === 'long';
  switch (spec) {
    case 'D':
    case 'd': {
      if (!integral) throw formatError('Format specifier was invalid.');
      const s = (typeof v === 'bigint' ? (v < 0n ? -v : v) : Math.abs(n)).toString();
      return (n < 0 ? '-' : '') + s.padStart(precision ?? 0, '0');
    }
    case 'X':
    case 'x': {
      if (!integral) throw formatError('Format specifier was invalid.');
      let big = typeof v === 'bigint' ? v : BigInt(v);
      if (big < 0n) big = kind === 'int' ? BigInt.asUintN(32, big) : BigInt.asUintN(64, big);
      const s = big.toString(16).padStart(precision ?? 0, '0');
      return spec === 'X' ? s.toUpperCase() : s;
    }
    case 'F':
    case 'f':
      return toFixedAway(n, precision ?? 2);
    case 'N':
    case 'n': {
      const s = toFixedAway(n, precision ?? 2);
      const neg = s.startsWith('-');
      const [i, f] = (neg ? s.slice(1) : s).split('.') as [string, string | undefined];
      return (neg ? '-' : '') + groupThousands(i) + (f !== undefined ? `.${f}` : '');
    }
    case 'P':
    case 'p': {
      const s = toFixedAway(n * 100, precision ?? 2);
      const neg = s.startsWith('-');
      const [i, f] = (neg ? s.slice(1) : s).split('.') as [string, string | undefined];
      return `${neg ? '-' : ''}${groupThousands(i)}${f !== undefined ? `.${f}` : ''} %`;
    }
    case 'E':
    case 'e': {
      const s = n.toExponential(precision ?? 6);
      const [mant, exp] = s.split('e') as [string, string];
      const e = Math.abs(Number(exp)).toString().padStart(3, '0');
      return `${mant}${spec}${Number(exp) < 0 ? '-' : '+'}${e}`;
    }
    case 'G':
    case 'g':
    case 'R':
    case 'r':
      if (precision === undefined || spec === 'R' || spec === 'r') {
        return typeof v === 'bigint' ? v.toString() : kind === 'double' ? formatDouble(n) : String(n);
      }
      return formatDouble(Number(n.toPrecision(precision)));
    case 'C':
    case 'c': {
      // Invariant culture currency: "¤1,234.57".
      const s = standardFormat(v, kind, 'N', precision ?? 2);
      return s.startsWith('-') ? `-¤${s.slice(1)}` : `¤${s}`;
    }
    default:
      throw formatError(`Format specifier '${spec}' was invalid.`);
  }
}

/**
 * A number as the custom-format code needs it, whatever its representation: doubles round through toFixedAway,
 * decimals exactly (format-decimal.ts).
 */
export interface FormatOperand {
  readonly negative: boolean;
  readonly zero: boolean;
  /** The value times 10^power (percent: 2; each trailing comma: -3). */
  shifted(power: number): FormatOperand;
  negated(): FormatOperand;
  /** |value| with `decimals` fraction digits, rounded half away from zero, as .NET's formatting rounds. */
  fixedAbs(decimals: number): string;
}

function numberOperand(v: number): FormatOperand {
  return {
    negative: v < 0,
    zero: v === 0,
    shifted: (power) => numberOperand(v * 10 ** power),
    negated: () => numberOperand(-v),
    fixedAbs: (decimals) => toFixedAway(Math.abs(v), decimals),
  };
}

function customFormat(v: number, format: string): string {
  return customFormatOperand(numberOperand(v), format);
}

/** Custom numeric formats: 0 # . , % and quoted literals; one section (sections after ';' apply to negatives). */
export function customFormatOperand(v: FormatOperand, format: string): string {
  const sections = format.split(';');
  let fmt = sections[0]!;
  let value = v;
  const negativeSection = v.negative && sections.length > 1 && sections[1] !== '';
  if (negativeSection) {
    fmt = sections[1]!;
    value = v.negated();
  } else if (v.zero && sections.length > 2) {
    fmt = sections[2]!;
  }
  let percent = false;
  let literalPrefix = '';
  let literalSuffix = '';
  let pattern = '';
  let inPattern = false;
  let afterPattern = false;
  for (let i = 0; i < fmt.length; i++) {
    const ch = fmt[i]!;
    if (ch === "'" || ch === '"') {
      const end = fmt.indexOf(ch, i + 1);
      const lit = fmt.slice(i + 1, end < 0 ? fmt.length : end);
      if (afterPattern || inPattern) literalSuffix += lit;
      else literalPrefix += lit;
      if (inPattern) afterPattern = true;
      i = end < 0 ? fmt.length : end;
      continue;
    }
    if (ch === '\\') {
      const lit = fmt[i + 1] ?? '';
      if (inPattern || afterPattern) literalSuffix += lit;
      else literalPrefix += lit;
      i++;
      continue;
    }
    if ('0#.,'.includes(ch) && !afterPattern) {
      inPattern = true;
      pattern += ch;
      continue;
    }
    if (ch === '%') percent = true;
    if (inPattern) afterPattern = true;
    if (afterPattern) literalSuffix += ch;
    else literalPrefix += ch;
  }
  if (percent) value = value.shifted(2);
  // Trailing commas before the point (or at the end) scale by 1000 each.
  let intPat = pattern;
  let fracPat = '';
  const dot = pattern.indexOf('.');
  if (dot >= 0) {
    intPat = pattern.slice(0, dot);
    fracPat = pattern.slice(dot + 1).replace(/,/g, '');
  }
  while (intPat.endsWith(',')) {
    value = value.shifted(-3);
    intPat = intPat.slice(0, -1);
  }
  const grouping = intPat.includes(',');
  intPat = intPat.replace(/,/g, '');
  const minInt = (intPat.match(/0/g) ?? []).length;
  const maxFrac = fracPat.length;
  const minFrac = fracPat.lastIndexOf('0') + 1;
  const fixed = value.fixedAbs(maxFrac);
  let [i, f = ''] = fixed.split('.') as [string, string | undefined];
  if (i === '0' && minInt === 0) i = '';
  i = i.padStart(minInt, '0');
  while (f.length > minFrac && f.endsWith('0')) f = f.slice(0, -1);
  if (grouping) i = groupThousands(i);
  const neg = value.negative && /[1-9]/.test(fixed) && !negativeSection;
  const body = f ? `${i}.${f}` : i;
  return (neg ? '-' : '') + literalPrefix + body + literalSuffix;
}
