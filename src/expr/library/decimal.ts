/**
 * System.Decimal: the type table over runtime/decimal.ts, so `decimal` behaves as in .NET (exact, 28–29 digits,
 * the scale kept: 1.10m + 2.205m is 3.305m, 1.50m.ToString() is "1.50"), not as a JavaScript number.
 * https://learn.microsoft.com/dotnet/api/system.decimal
 */
import { asDecimal } from '../runtime/convert.js';
import { CsException, defineType, type Method, prop } from '../runtime/core.js';
import {
  CsDecimal,
  DECIMAL_MAX,
  DECIMAL_MIN,
  DECIMAL_MINUS_ONE,
  DECIMAL_ONE,
  DECIMAL_ZERO,
  decAdd,
  decCompare,
  decDivide,
  decMultiply,
  decNegate,
  decRemainder,
  decRound,
  decSubtract,
  decTruncateToBigInt,
  parseDecimal,
  Rounding,
  stripTrailingZeros,
} from '../runtime/decimal.js';
import { CsEnum } from '../runtime/enum.js';
import { CsDouble } from '../runtime/values.js';
import { hashString, int, str } from './helpers.js';
import { numberMethods, numericConvert, tryParse } from './primitives.js';

/** Math.Round / decimal.Round's overloads: (d), (d, decimals), (d, mode), (d, decimals, mode). */
export function roundDecimal(args: readonly unknown[]): CsDecimal {
  let decimals = 0;
  let mode: number = Rounding.ToEven;
  for (const a of args.slice(1)) {
    if (a instanceof CsEnum) mode = a.value;
    else decimals = int(a);
  }
  return decRound(asDecimal(args[0]), decimals, mode);
}

/** Rounds to an integer in the given direction: Floor, Ceiling, Truncate keep no fraction digits. */
export const toIntegral = (d: CsDecimal, mode: number): CsDecimal => decRound(d, 0, mode);

const binary =
  (op: (a: CsDecimal, b: CsDecimal) => CsDecimal): Method =>
  (_rt, _s, args) =>
    op(asDecimal(args[0]), asDecimal(args[1]));

function checkedInteger(d: CsDecimal, min: bigint, max: bigint, type: string): bigint {
  const t = decTruncateToBigInt(d);
  if (t < min || t > max) {
    throw new CsException('OverflowException', `Value was either too large or too small for an ${type}.`);
  }
  return t;
}

export const DecimalType = defineType({
  name: 'Decimal',
  namespace: 'System',
  aliases: ['decimal'],
  classes: [CsDecimal],
  defaultValue: DECIMAL_ZERO,
  convert: numericConvert('decimal'),
  methods: {
    ...numberMethods,
    // Equal values hash alike whatever their scale (1.0m and 1m), as .NET's do.
    GetHashCode: (_rt, self: CsDecimal) => hashString(stripTrailingZeros(self).toString()),
  },
  staticProps: {
    Zero: prop(() => DECIMAL_ZERO),
    One: prop(() => DECIMAL_ONE),
    MinusOne: prop(() => DECIMAL_MINUS_ONE),
    MaxValue: prop(() => DECIMAL_MAX),
    MinValue: prop(() => DECIMAL_MIN),
  },
  staticMethods: {
    Parse: (_rt, _s, args) => parseDecimal(str(args[0], 's')),
    TryParse: tryParse(parseDecimal, DECIMAL_ZERO),
    Round: (_rt, _s, args) => roundDecimal(args),
    Floor: (_rt, _s, args) => toIntegral(asDecimal(args[0]), Rounding.ToNegativeInfinity),
    Ceiling: (_rt, _s, args) => toIntegral(asDecimal(args[0]), Rounding.ToPositiveInfinity),
    Truncate: (_rt, _s, args) => toIntegral(asDecimal(args[0]), Rounding.ToZero),
    Add: binary(decAdd),
    Subtract: binary(decSubtract),
    Multiply: binary(decMultiply),
    Divide: binary(decDivide),
    Remainder: binary(decRemainder),
    Negate: (_rt, _s, args) => decNegate(asDecimal(args[0])),
    Compare: (_rt, _s, args) => decCompare(asDecimal(args[0]), asDecimal(args[1])),
    Equals: (_rt, _s, args) => decCompare(asDecimal(args[0]), asDecimal(args[1])) === 0,
    ToDouble: (_rt, _s, args) => new CsDouble(asDecimal(args[0]).v),
    ToInt32: (_rt, _s, args) =>
      Number(checkedInteger(asDecimal(args[0]), -2147483648n, 2147483647n, 'Int32')),
    ToInt64: (_rt, _s, args) =>
      checkedInteger(asDecimal(args[0]), -9223372036854775808n, 9223372036854775807n, 'Int64'),
  },
});
