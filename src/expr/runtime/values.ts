/**
 * Runtime representation of .NET values. JavaScript has one number type, C# has several whose arithmetic differs, so:
 *   int (and byte/short/ushort/sbyte)  → JS number holding an int32
 *   long (and uint/ulong)              → bigint, wrapped to 64 bits after every operation
 *   double/float                        → CsDouble (boxed, so 10.0/4 and 10/4 stay different and 2.0 prints "2")
 *   decimal                             → CsDecimal (a 96-bit mantissa and a scale, as .NET's: see decimal.ts)
 *   char                                → CsChar (so 'a' + 1 is 98 while "" + 'a' is "a")
 *   string / bool / null                → JS string / boolean / null (undefined never escapes a host function)
 * Everything else is an instance of a class in src/expr whose members are listed in a type table.
 */

export class CsDouble {
  constructor(readonly v: number) {}
}

export { CsDecimal } from './decimal.js';

export class CsChar {
  constructor(readonly code: number) {}
  toString(): string {
    return String.fromCharCode(this.code);
  }
}

export const dbl = (v: number): CsDouble => new CsDouble(v);
export const chr = (s: string): CsChar => new CsChar(s.charCodeAt(0));

/** .NET ticks: 100 ns units since 0001-01-01. */
export const TICKS_PER_MS = 10_000n;
export const TICKS_PER_SECOND = 10_000_000n;
export const UNIX_EPOCH_TICKS = 621_355_968_000_000_000n;

export type DateTimeKind = 'Unspecified' | 'Utc' | 'Local';

/** System.DateTime. Local time is UTC on a gateway (containers run in UTC), so Now == UtcNow apart from Kind. */
export class CsDateTime {
  constructor(
    readonly ticks: bigint,
    readonly kind: DateTimeKind = 'Unspecified',
  ) {}
  static fromDate(d: Date, kind: DateTimeKind = 'Utc'): CsDateTime {
    return new CsDateTime(BigInt(d.getTime()) * TICKS_PER_MS + UNIX_EPOCH_TICKS, kind);
  }
  /** Milliseconds since the Unix epoch (sub-millisecond ticks are dropped). */
  get epochMs(): number {
    const t = this.ticks - UNIX_EPOCH_TICKS;
    return Number(t >= 0n ? t / TICKS_PER_MS : -((-t + TICKS_PER_MS - 1n) / TICKS_PER_MS));
  }
  toDate(): Date {
    return new Date(this.epochMs);
  }
}

/** System.DateTimeOffset: local ticks plus the offset from UTC in minutes. */
export class CsDateTimeOffset {
  constructor(
    readonly ticks: bigint,
    readonly offsetMinutes: number,
  ) {}
  get utcTicks(): bigint {
    return this.ticks - BigInt(this.offsetMinutes) * 60n * TICKS_PER_SECOND;
  }
}

export class CsTimeSpan {
  constructor(readonly ticks: bigint) {}
  static fromMs(ms: number): CsTimeSpan {
    return new CsTimeSpan(BigInt(Math.round(ms * 10_000)));
  }
}

/** System.Guid, kept as its canonical lower-case "D" form. */
export class CsGuid {
  constructor(readonly value: string) {}
}
