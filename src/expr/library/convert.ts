/** System.Convert: base 64 and hex, and the ToXxx conversions (strings parse, doubles round half to even). */
import { asDecimal, asNumber, toDotNetStringRt, toInt32, toInt64 } from '../runtime/convert.js';
import { CsException, checkStringLength, defineType, formatError } from '../runtime/core.js';
import {
  CsDecimal,
  DECIMAL_ONE,
  DECIMAL_ZERO,
  decRound,
  decTruncateToBigInt,
  parseDecimal,
  Rounding,
} from '../runtime/decimal.js';
import { parseDateTime } from '../runtime/format-date.js';
import { CsChar, CsDateTime, CsDouble } from '../runtime/values.js';
import { bytes, int, str } from './helpers.js';
import { tokenTo } from './json/conversions.js';
import { JToken } from './json/tokens.js';
import { parseDouble, parseInt32, parseInt64, roundHalfEven } from './primitives.js';

const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

function fromBase64(s: string): Buffer {
  const t = s.replace(/[\s]/g, '');
  if (t.length % 4 !== 0 || !B64_RE.test(t)) {
    throw formatError(
      'The input is not a valid Base-64 string as it contains a non-base 64 character, more than two padding characters, or an illegal character among the padding characters.',
    );
  }
  return Buffer.from(t, 'base64');
}

/** Convert.ToInt32(x): strings parse, doubles round half to even, bools become 0/1. */
function convertToInt(v: unknown, long: boolean): unknown {
  if (v === null || v === undefined) return long ? 0n : 0;
  if (typeof v === 'string') return long ? parseInt64(v) : parseInt32(v);
  if (typeof v === 'boolean') return long ? BigInt(v ? 1 : 0) : v ? 1 : 0;
  if (v instanceof CsDecimal) {
    const r = decTruncateToBigInt(decRound(v, 0, Rounding.ToEven));
    if (long ? r > 9223372036854775807n || r < -9223372036854775808n : r > 2147483647n || r < -2147483648n)
      throw new CsException(
        'OverflowException',
        `Value was either too large or too small for an Int${long ? 64 : 32}.`,
      );
    return long ? r : Number(r);
  }
  if (v instanceof CsDouble) {
    const r = roundHalfEven(v.v, 0);
    if (!long && (r > 2147483647 || r < -2147483648))
      throw new CsException('OverflowException', 'Value was either too large or too small for an Int32.');
    return long ? BigInt(r) : r;
  }
  if (v instanceof JToken) return tokenTo(v, long ? 'long' : 'int');
  if (typeof v === 'bigint' && !long && (v > 2147483647n || v < -2147483648n)) {
    throw new CsException('OverflowException', 'Value was either too large or too small for an Int32.');
  }
  return long ? toInt64(v) : toInt32(v);
}

export const ConvertType = defineType({
  name: 'Convert',
  namespace: 'System',
  staticMethods: {
    ToBase64String: (rt, _s, args) => {
      let b = bytes(args[0]);
      if (args.length >= 3) b = b.subarray(int(args[1]), int(args[1]) + int(args[2]));
      checkStringLength(rt, Math.ceil(b.length / 3) * 4);
      return b.toString('base64');
    },
    FromBase64String: (_rt, _s, args) => fromBase64(str(args[0], 's')),
    ToString: (rt, _s, args) => {
      if (
        args.length === 2 &&
        typeof args[1] === 'number' &&
        (typeof args[0] === 'number' || typeof args[0] === 'bigint')
      ) {
        const base = args[1];
        let n = BigInt(args[0]);
        if (n < 0n) n = BigInt.asUintN(typeof args[0] === 'number' ? 32 : 64, n);
        return n.toString(base);
      }
      return args[0] === null ? '' : toDotNetStringRt(rt, args[0]);
    },
    ToInt32: (_rt, _s, args) => {
      if (args.length === 2 && typeof args[0] === 'string' && typeof args[1] === 'number') {
        return Number(BigInt.asIntN(32, BigInt(Number.parseInt(args[0], args[1]))));
      }
      return convertToInt(args[0], false);
    },
    ToInt16: (_rt, _s, args) => convertToInt(args[0], false),
    ToInt64: (_rt, _s, args) => convertToInt(args[0], true),
    ToDouble: (_rt, _s, args) => {
      const v = args[0];
      if (v === null) return new CsDouble(0);
      if (typeof v === 'string') return new CsDouble(parseDouble(v));
      if (typeof v === 'boolean') return new CsDouble(v ? 1 : 0);
      if (v instanceof JToken) return tokenTo(v, 'double');
      return new CsDouble(asNumber(v));
    },
    ToDecimal: (_rt, _s, args) => {
      const v = args[0];
      if (v === null) return DECIMAL_ZERO;
      if (typeof v === 'string') return parseDecimal(v);
      if (typeof v === 'boolean') return v ? DECIMAL_ONE : DECIMAL_ZERO;
      if (v instanceof JToken) return tokenTo(v, 'decimal');
      return asDecimal(v);
    },
    ToBoolean: (_rt, _s, args) => {
      const v = args[0];
      if (v === null) return false;
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') {
        const t = v.trim().toLowerCase();
        if (t === 'true') return true;
        if (t === 'false') return false;
        throw formatError(`String '${v}' was not recognized as a valid Boolean.`);
      }
      if (v instanceof JToken) return tokenTo(v, 'bool');
      return asNumber(v) !== 0;
    },
    ToChar: (_rt, _s, args) => (args[0] instanceof CsChar ? args[0] : new CsChar(int(args[0]))),
    ToByte: (_rt, _s, args) => (convertToInt(args[0], false) as number) & 255,
    ToDateTime: (_rt, _s, args) => (args[0] instanceof CsDateTime ? args[0] : parseDateTime(str(args[0]))),
    ToHexString: (_rt, _s, args) => bytes(args[0]).toString('hex').toUpperCase(),
    FromHexString: (_rt, _s, args) => {
      const s = str(args[0]);
      if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s))
        throw formatError('The input is not a valid hex string.');
      return Buffer.from(s, 'hex');
    },
  },
});
