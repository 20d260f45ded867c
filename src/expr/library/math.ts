/** System.Math and System.Random (including .NET's seeded sequence). */
import { randomInt } from 'node:crypto';
import { asDecimal, asNumber, compare, numRank } from '../runtime/convert.js';
import { CsException, defineType, type Method, prop } from '../runtime/core.js';
import { decNegate, Rounding } from '../runtime/decimal.js';
import { CsEnum } from '../runtime/enum.js';
import { CsDecimal, CsDouble } from '../runtime/values.js';
import { roundDecimal, toIntegral } from './decimal.js';
import { MidpointRounding } from './enums.js';
import { int } from './helpers.js';
import { roundHalfEven } from './primitives.js';

// ---- Math ----

/** Re-wraps a JS number in the representation of the operands (Math.Abs(int) is int, Math.Abs(double) double). */
function like(sample: unknown, v: number): unknown {
  if (typeof sample === 'number') return v;
  if (typeof sample === 'bigint') return BigInt(v);
  return new CsDouble(v);
}

const d1 =
  (f: (x: number) => number): Method =>
  (_rt, _s, args) =>
    new CsDouble(f(asNumber(args[0])));

function round(args: unknown[]): unknown {
  if (args[0] instanceof CsDecimal) return roundDecimal(args);
  const v = asNumber(args[0]);
  let digits = 0;
  let mode: number = MidpointRounding.members.ToEven;
  for (const a of args.slice(1)) {
    if (a instanceof CsEnum) mode = a.value;
    else digits = int(a);
  }
  const f = 10 ** digits;
  let r: number;
  if (mode === MidpointRounding.members.AwayFromZero)
    r = (Math.sign(v) * Math.round(Math.abs(v) * f + 1e-9 * 0)) / f;
  else if (mode === MidpointRounding.members.ToZero) r = Math.trunc(v * f) / f;
  else r = roundHalfEven(v, digits);
  return new CsDouble(r);
}

export const MathType = defineType({
  name: 'Math',
  namespace: 'System',
  staticProps: { PI: prop(() => new CsDouble(Math.PI)), E: prop(() => new CsDouble(Math.E)) },
  staticMethods: {
    Abs: (_rt, _s, args) => {
      const v = args[0];
      if (v === -2147483648)
        throw new CsException(
          'OverflowException',
          'Negating the minimum value of a twos complement number is invalid.',
        );
      if (typeof v === 'bigint') return v < 0n ? -v : v;
      if (v instanceof CsDecimal) return v.mantissa < 0n ? decNegate(v) : v;
      return like(v, Math.abs(asNumber(v)));
    },
    Max: (_rt, _s, args) => {
      const [a, b] = args;
      if (a instanceof CsDecimal || b instanceof CsDecimal)
        return compare(a, b) >= 0 ? asDecimal(a) : asDecimal(b);
      const r = numRank(a) >= numRank(b) ? a : b;
      return compare(a, b) >= 0 ? like(r, asNumber(a)) : like(r, asNumber(b));
    },
    Min: (_rt, _s, args) => {
      const [a, b] = args;
      if (a instanceof CsDecimal || b instanceof CsDecimal)
        return compare(a, b) <= 0 ? asDecimal(a) : asDecimal(b);
      const r = numRank(a) >= numRank(b) ? a : b;
      return compare(a, b) <= 0 ? like(r, asNumber(a)) : like(r, asNumber(b));
    },
    Floor: (_rt, _s, args) =>
      args[0] instanceof CsDecimal
        ? toIntegral(args[0], Rounding.ToNegativeInfinity)
        : new CsDouble(Math.floor(asNumber(args[0]))),
    Ceiling: (_rt, _s, args) =>
      args[0] instanceof CsDecimal
        ? toIntegral(args[0], Rounding.ToPositiveInfinity)
        : new CsDouble(Math.ceil(asNumber(args[0]))),
    Truncate: (_rt, _s, args) =>
      args[0] instanceof CsDecimal
        ? toIntegral(args[0], Rounding.ToZero)
        : new CsDouble(Math.trunc(asNumber(args[0]))),
    Round: (_rt, _s, args) => round(args),
    Sign: (_rt, _s, args) =>
      args[0] instanceof CsDecimal
        ? Number(args[0].mantissa > 0n) - Number(args[0].mantissa < 0n)
        : Math.sign(asNumber(args[0])),
    Pow: (_rt, _s, args) => new CsDouble(asNumber(args[0]) ** asNumber(args[1])),
    Sqrt: d1(Math.sqrt),
    Log: (_rt, _s, args) =>
      new CsDouble(
        args.length > 1
          ? Math.log(asNumber(args[0])) / Math.log(asNumber(args[1]))
          : Math.log(asNumber(args[0])),
      ),
    Log10: d1(Math.log10),
    Log2: d1(Math.log2),
    Exp: d1(Math.exp),
    Sin: d1(Math.sin),
    Cos: d1(Math.cos),
    Tan: d1(Math.tan),
    Atan: d1(Math.atan),
    Atan2: (_rt, _s, args) => new CsDouble(Math.atan2(asNumber(args[0]), asNumber(args[1]))),
    Clamp: (_rt, _s, args) => {
      const [v, lo, hi] = args;
      return compare(v, lo) < 0 ? lo : compare(v, hi) > 0 ? hi : v;
    },
  },
});

// ---- Random ----

/**
 * System.Random. Unseeded instances use the platform CSPRNG. Seeded instances reproduce .NET's legacy subtractive
 * generator (Knuth), so `new Random(42).Next(100)` gives the same numbers as in API Management.
 */
export class CsRandom {
  private seedArray: number[] | null = null;
  private inext = 0;
  private inextp = 21;
  constructor(seed: number | null) {
    if (seed === null) return;
    const MBIG = 2147483647;
    const sa = new Array<number>(56).fill(0);
    const subtraction = seed === -2147483648 ? 2147483647 : Math.abs(seed);
    let mj = 161803398 - subtraction;
    sa[55] = mj;
    let mk = 1;
    for (let i = 1; i < 55; i++) {
      const ii = (21 * i) % 55;
      sa[ii] = mk;
      mk = mj - mk;
      if (mk < 0) mk += MBIG;
      mj = sa[ii]!;
    }
    for (let k = 1; k < 5; k++) {
      for (let i = 1; i < 56; i++) {
        sa[i] = (sa[i]! - sa[1 + ((i + 30) % 55)]!) | 0;
        if (sa[i]! < 0) sa[i] = sa[i]! + MBIG;
      }
    }
    this.seedArray = sa;
  }
  private internalSample(): number {
    const sa = this.seedArray!;
    let locINext = this.inext + 1;
    if (locINext >= 56) locINext = 1;
    let locINextp = this.inextp + 1;
    if (locINextp >= 56) locINextp = 1;
    let ret = (sa[locINext]! - sa[locINextp]!) | 0;
    if (ret === 2147483647) ret--;
    if (ret < 0) ret += 2147483647;
    sa[locINext] = ret;
    this.inext = locINext;
    this.inextp = locINextp;
    return ret;
  }
  sample(): number {
    if (!this.seedArray) return randomInt(0, 2 ** 47) / 2 ** 47;
    return this.internalSample() * (1.0 / 2147483647);
  }
  next(min: number, max: number): number {
    if (min > max)
      throw new CsException('ArgumentOutOfRangeException', "'minValue' cannot be greater than maxValue.");
    if (!this.seedArray) return min === max ? min : randomInt(min, max);
    const range = max - min;
    return Math.trunc(this.sample() * range) + min;
  }
}

export const RandomType = defineType({
  name: 'Random',
  namespace: 'System',
  classes: [CsRandom],
  construct: (_rt, args) => new CsRandom(args.length ? int(args[0]) : null),
  methods: {
    Next: (_rt, r: CsRandom, args) => {
      if (args.length === 0) return r.next(0, 2147483647);
      if (args.length === 1) {
        const max = int(args[0]);
        if (max < 0)
          throw new CsException('ArgumentOutOfRangeException', "'maxValue' must be greater than zero.");
        return r.next(0, max);
      }
      return r.next(int(args[0]), int(args[1]));
    },
    NextDouble: (_rt, r: CsRandom) => new CsDouble(r.sample()),
    NextBytes: (_rt, r: CsRandom, args) => {
      const b = args[0] as Uint8Array;
      for (let i = 0; i < b.length; i++) b[i] = r.next(0, 256);
      return null;
    },
  },
  staticProps: { Shared: prop(() => new CsRandom(null)) },
});
