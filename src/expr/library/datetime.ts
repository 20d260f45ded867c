/** DateTime, DateTimeOffset, TimeSpan (ticks-exact), formatted and parsed the .NET way (invariant culture). */

import type { RE2JS } from 're2js';
import { compileBounded, searchWithinBudget } from '../runtime/bounded-search.js';
import { asNumber } from '../runtime/convert.js';
import {
  CsException,
  defineType,
  invalidCast,
  type Method,
  prop,
  type Rt,
  typeName,
} from '../runtime/core.js';
import { CsEnum } from '../runtime/enum.js';
import {
  daysInMonth,
  formatDateTime,
  formatDateTimeOffset,
  formatTimeSpan,
  isLeap,
  parseDateTime,
  parseDateTimeOffset,
  parseTimeSpan,
  partsOf,
  ticksOf,
} from '../runtime/format-date.js';
import {
  CsDateTime,
  CsDateTimeOffset,
  CsDouble,
  CsTimeSpan,
  type DateTimeKind,
  TICKS_PER_MS,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
} from '../runtime/values.js';
import { DateTimeKindEnum, DayOfWeekEnum } from './enums.js';
import { int, optStr, setOut, str } from './helpers.js';
import { JValue } from './json/tokens.js';

const TICKS_PER_DAY = 864_000_000_000n;
const MAX_TICKS = 3_155_378_975_999_999_999n;

function checkTicks(t: bigint): bigint {
  if (t < 0n || t > MAX_TICKS) {
    throw new CsException(
      'ArgumentOutOfRangeException',
      'The added or subtracted value results in an un-representable DateTime.',
    );
  }
  return t;
}

function nowTicks(): bigint {
  return BigInt(Date.now()) * TICKS_PER_MS + UNIX_EPOCH_TICKS;
}

const num = (v: unknown): number => asNumber(v);
/** .NET rounds AddSeconds(double) etc. to the nearest millisecond before converting to ticks (pre-.NET 7). */
const scaled = (v: unknown, msPer: number): bigint => BigInt(Math.round(num(v) * msPer)) * TICKS_PER_MS;

function addMonths(d: CsDateTime, months: number): CsDateTime {
  const p = partsOf(d.ticks);
  let y = p.year;
  let m = p.month + months;
  y += Math.floor((m - 1) / 12);
  m = ((((m - 1) % 12) + 12) % 12) + 1;
  const day = Math.min(p.day, daysInMonth(y, m));
  const timeOfDay = ((d.ticks % TICKS_PER_DAY) + TICKS_PER_DAY) % TICKS_PER_DAY;
  return new CsDateTime(checkTicks(ticksOf(y, m, day) + timeOfDay), d.kind);
}

const kindOf = (v: unknown): DateTimeKind =>
  v instanceof CsEnum ? (DateTimeKindEnum.names.get(v.value) as DateTimeKind) : 'Unspecified';

const dateMethods = (
  wrap: (self: unknown, ticks: bigint) => unknown,
  ticksOfSelf: (self: unknown) => bigint,
): Record<string, Method> => ({
  Add: (_rt, self, args) => wrap(self, checkTicks(ticksOfSelf(self) + (args[0] as CsTimeSpan).ticks)),
  AddTicks: (_rt, self, args) =>
    wrap(self, checkTicks(ticksOfSelf(self) + BigInt(args[0] as number | bigint))),
  AddMilliseconds: (_rt, self, args) => wrap(self, checkTicks(ticksOfSelf(self) + scaled(args[0], 1))),
  AddSeconds: (_rt, self, args) => wrap(self, checkTicks(ticksOfSelf(self) + scaled(args[0], 1000))),
  AddMinutes: (_rt, self, args) => wrap(self, checkTicks(ticksOfSelf(self) + scaled(args[0], 60_000))),
  AddHours: (_rt, self, args) => wrap(self, checkTicks(ticksOfSelf(self) + scaled(args[0], 3_600_000))),
  AddDays: (_rt, self, args) => wrap(self, checkTicks(ticksOfSelf(self) + scaled(args[0], 86_400_000))),
});

const dateProps = (ticksOfSelf: (self: unknown) => bigint) => ({
  Year: prop((s) => partsOf(ticksOfSelf(s)).year),
  Month: prop((s) => partsOf(ticksOfSelf(s)).month),
  Day: prop((s) => partsOf(ticksOfSelf(s)).day),
  Hour: prop((s) => partsOf(ticksOfSelf(s)).hour),
  Minute: prop((s) => partsOf(ticksOfSelf(s)).minute),
  Second: prop((s) => partsOf(ticksOfSelf(s)).second),
  Millisecond: prop((s) => Math.floor(partsOf(ticksOfSelf(s)).fraction / 10_000)),
  Ticks: prop((s) => ticksOfSelf(s)),
  DayOfWeek: prop(
    (s) => DayOfWeekEnum.values.get(DayOfWeekEnum.names.get(partsOf(ticksOfSelf(s)).dayOfWeek)!)!,
  ),
  DayOfYear: prop((s) => {
    const t = ticksOfSelf(s);
    const p = partsOf(t);
    return Number((t - ticksOf(p.year, 1, 1)) / TICKS_PER_DAY) + 1;
  }),
  TimeOfDay: prop((s) => new CsTimeSpan(((ticksOfSelf(s) % TICKS_PER_DAY) + TICKS_PER_DAY) % TICKS_PER_DAY)),
});

function toDateTime(v: unknown, explicit: boolean): CsDateTime {
  if (v instanceof CsDateTime) return v;
  if (explicit && v instanceof JValue) {
    if (v.value instanceof CsDateTime) return v.value;
    if (typeof v.value === 'string') return parseDateTime(v.value);
  }
  throw invalidCast(typeName(v), 'System.DateTime');
}

/** A custom format as an anchored pattern, and the field each of its capture groups holds, in order. */
interface FormatPattern {
  readonly re: RE2JS;
  readonly source: string;
  readonly fields: readonly string[];
}

/**
 * Longer formats are refused: no date format comes near it, and the pattern compiled from one costs time in its
 * length on the engine's only thread.
 */
const MAX_FORMAT_LENGTH = 256;
const MAX_CACHED_FORMATS = 64;
const formatCache = new Map<string, FormatPattern>();

const quoteLiteral = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The pattern of a custom format; enough for the fixed-width formats policies use. It runs on re2js within the regex
 * budget, as Regex does: on JavaScript's backtracking RegExp a format of 24 one-or-two-digit fields ("dHdH…") on 49
 * digits took 2 s, and each further field doubled that.
 */
function formatPattern(format: string): FormatPattern {
  const cached = formatCache.get(format);
  if (cached) return cached;
  if (format.length > MAX_FORMAT_LENGTH) {
    throw new CsException(
      'FormatException',
      `the format is ${format.length} characters long, more than the ${MAX_FORMAT_LENGTH} a date format may have`,
    );
  }
  const fields: string[] = [];
  let re = '';
  for (let i = 0; i < format.length; ) {
    const ch = format[i]!;
    let n = 1;
    while (format[i + n] === ch) n++;
    if ('yMdHhmsf'.includes(ch)) {
      fields.push(ch.repeat(n));
      re +=
        ch === 'f'
          ? `(\\d{${n}})`
          : n === 1
            ? '(\\d{1,2})'
            : ch === 'y' && n === 4
              ? '(\\d{4})'
              : `(\\d{${n}})`;
    } else if (ch === 'K' || ch === 'z') {
      fields.push('z');
      re += '(Z|[+-]\\d{2}:?\\d{2})?';
      n = ch === 'z' ? n : 1;
    } else if (ch === "'") {
      const end = format.indexOf("'", i + 1);
      // Before, an unclosed quote sent the scan back to the start of the format, for ever.
      if (end < 0) {
        throw new CsException(
          'FormatException',
          `Cannot find a matching quote character for the character "'".`,
        );
      }
      re += quoteLiteral(format.slice(i + 1, end));
      i = end + 1;
      continue;
    } else {
      re += quoteLiteral(ch.repeat(n));
    }
    i += n;
  }
  const source = `^${re}$`;
  const pattern = { re: compileBounded(source, 0), source, fields };
  if (formatCache.size >= MAX_CACHED_FORMATS) formatCache.delete(formatCache.keys().next().value!);
  formatCache.set(format, pattern);
  return pattern;
}

function parseExact(rt: Rt, s: string, format: string): CsDateTime {
  const { re, source, fields } = formatPattern(format);
  const text = s.trim();
  const matcher = re.matcher(text);
  if (!searchWithinBudget(rt, re, source, text, 0, () => matcher.find(0))) {
    throw new CsException('FormatException', `String '${s}' was not recognized as a valid DateTime.`);
  }
  const v: Record<string, number> = { y: 1, M: 1, d: 1, H: 0, m: 0, s: 0, f: 0 };
  let offset: number | null = null;
  fields.forEach((f, idx) => {
    const g = matcher.group(idx + 1);
    if (g === null) return;
    if (f === 'z') {
      offset = g === 'Z' ? 0 : (g[0] === '-' ? -1 : 1) * (Number(g.slice(1, 3)) * 60 + Number(g.slice(-2)));
    } else if (f[0] === 'f') v.f = Number(g.padEnd(7, '0'));
    else v[f[0] === 'h' ? 'H' : f[0]!] = Number(g);
  });
  let ticks = ticksOf(v.y!, v.M!, v.d!, v.H!, v.m!, v.s!) + BigInt(v.f!);
  if (offset !== null) ticks -= BigInt(offset) * 60n * TICKS_PER_SECOND;
  return new CsDateTime(ticks, offset !== null ? 'Local' : 'Unspecified');
}

export const DateTimeType = defineType({
  name: 'DateTime',
  namespace: 'System',
  classes: [CsDateTime],
  defaultValue: new CsDateTime(0n),
  convert: (v, explicit) => toDateTime(v, explicit),
  construct: (_rt, args) => {
    if (args.length === 1) return new CsDateTime(checkTicks(BigInt(args[0] as number | bigint)));
    const n = args.map((a) => (a instanceof CsEnum ? a : int(a)));
    const kind = n.find((a) => a instanceof CsEnum);
    const nums = n.filter((a): a is number => typeof a === 'number');
    const [y, mo, d, h = 0, mi = 0, s = 0, ms = 0] = nums;
    return new CsDateTime(ticksOf(y!, mo!, d!, h, mi, s, ms), kindOf(kind));
  },
  props: {
    ...dateProps((s) => (s as CsDateTime).ticks),
    Kind: prop((s: CsDateTime) => DateTimeKindEnum.values.get(s.kind)!),
    Date: prop((s: CsDateTime) => new CsDateTime(s.ticks - (s.ticks % TICKS_PER_DAY), s.kind)),
  },
  methods: {
    ...dateMethods(
      (self, t) => new CsDateTime(t, (self as CsDateTime).kind),
      (s) => (s as CsDateTime).ticks,
    ),
    AddMonths: (_rt, self: CsDateTime, args) => addMonths(self, int(args[0])),
    AddYears: (_rt, self: CsDateTime, args) => addMonths(self, int(args[0]) * 12),
    Subtract: (_rt, self: CsDateTime, args) =>
      args[0] instanceof CsDateTime
        ? new CsTimeSpan(self.ticks - args[0].ticks)
        : new CsDateTime(checkTicks(self.ticks - (args[0] as CsTimeSpan).ticks), self.kind),
    ToString: (_rt, self: CsDateTime, args) => formatDateTime(self, args.length ? optStr(args[0]) : null),
    ToUniversalTime: (_rt, self: CsDateTime) => new CsDateTime(self.ticks, 'Utc'),
    ToLocalTime: (_rt, self: CsDateTime) => new CsDateTime(self.ticks, 'Local'),
    ToShortDateString: (_rt, self: CsDateTime) => formatDateTime(self, 'd'),
    ToLongDateString: (_rt, self: CsDateTime) => formatDateTime(self, 'D'),
    ToShortTimeString: (_rt, self: CsDateTime) => formatDateTime(self, 't'),
    ToLongTimeString: (_rt, self: CsDateTime) => formatDateTime(self, 'T'),
    ToFileTimeUtc: (_rt, self: CsDateTime) => self.ticks - 504_911_232_000_000_000n,
    ToBinary: (_rt, self: CsDateTime) => self.ticks,
    IsDaylightSavingTime: () => false,
    CompareTo: (_rt, self: CsDateTime, args) => {
      const o = (args[0] as CsDateTime).ticks;
      return self.ticks < o ? -1 : self.ticks > o ? 1 : 0;
    },
  },
  staticProps: {
    UtcNow: prop(() => new CsDateTime(nowTicks(), 'Utc')),
    Now: prop(() => new CsDateTime(nowTicks(), 'Local')),
    Today: prop(() => {
      const t = nowTicks();
      return new CsDateTime(t - (t % TICKS_PER_DAY), 'Local');
    }),
    MinValue: prop(() => new CsDateTime(0n)),
    MaxValue: prop(() => new CsDateTime(MAX_TICKS)),
    UnixEpoch: prop(() => new CsDateTime(UNIX_EPOCH_TICKS, 'Utc')),
  },
  staticMethods: {
    Parse: (_rt, _s, args) => parseDateTime(str(args[0], 's')),
    TryParse: (_rt, _s, args) => {
      const out = args[args.length - 1];
      try {
        setOut(out, parseDateTime(str(args[0])));
        return true;
      } catch (e) {
        if (!(e instanceof CsException)) throw e;
        setOut(out, new CsDateTime(0n));
        return false;
      }
    },
    ParseExact: (rt, _s, args) =>
      parseExact(rt, str(args[0], 's'), Array.isArray(args[1]) ? str(args[1][0]) : str(args[1], 'format')),
    TryParseExact: (rt, _s, args) => {
      const out = args[args.length - 1];
      try {
        setOut(out, parseExact(rt, str(args[0]), str(args[1])));
        return true;
      } catch (e) {
        if (!(e instanceof CsException)) throw e;
        setOut(out, new CsDateTime(0n));
        return false;
      }
    },
    DaysInMonth: (_rt, _s, args) => daysInMonth(int(args[0]), int(args[1])),
    IsLeapYear: (_rt, _s, args) => isLeap(int(args[0])),
    SpecifyKind: (_rt, _s, args) => new CsDateTime((args[0] as CsDateTime).ticks, kindOf(args[1])),
    Compare: (_rt, _s, args) => {
      const a = (args[0] as CsDateTime).ticks;
      const b = (args[1] as CsDateTime).ticks;
      return a < b ? -1 : a > b ? 1 : 0;
    },
    FromFileTimeUtc: (_rt, _s, args) =>
      new CsDateTime(BigInt(args[0] as bigint) + 504_911_232_000_000_000n, 'Utc'),
  },
});

const dtoTicks = (s: unknown): bigint => (s as CsDateTimeOffset).ticks;

export const DateTimeOffsetType = defineType({
  name: 'DateTimeOffset',
  namespace: 'System',
  classes: [CsDateTimeOffset],
  defaultValue: new CsDateTimeOffset(0n, 0),
  convert: (v) => {
    if (v instanceof CsDateTimeOffset) return v;
    if (v instanceof CsDateTime) return new CsDateTimeOffset(v.ticks, 0);
    throw invalidCast(typeName(v), 'System.DateTimeOffset');
  },
  construct: (_rt, args) => {
    if (args[0] instanceof CsDateTime)
      return new CsDateTimeOffset(
        args[0].ticks,
        args[1] ? Number((args[1] as CsTimeSpan).ticks / (60n * TICKS_PER_SECOND)) : 0,
      );
    const nums = args.filter((a): a is number => typeof a === 'number');
    const off = args.find((a) => a instanceof CsTimeSpan) as CsTimeSpan | undefined;
    const [y, mo, d, h = 0, mi = 0, s = 0, ms = 0] = nums;
    return new CsDateTimeOffset(
      ticksOf(y!, mo!, d!, h, mi, s, ms),
      off ? Number(off.ticks / (60n * TICKS_PER_SECOND)) : 0,
    );
  },
  props: {
    ...dateProps(dtoTicks),
    Offset: prop((s: CsDateTimeOffset) => new CsTimeSpan(BigInt(s.offsetMinutes) * 60n * TICKS_PER_SECOND)),
    UtcDateTime: prop((s: CsDateTimeOffset) => new CsDateTime(s.utcTicks, 'Utc')),
    DateTime: prop((s: CsDateTimeOffset) => new CsDateTime(s.ticks)),
    LocalDateTime: prop((s: CsDateTimeOffset) => new CsDateTime(s.utcTicks, 'Local')),
    UtcTicks: prop((s: CsDateTimeOffset) => s.utcTicks),
    Date: prop((s: CsDateTimeOffset) => new CsDateTime(s.ticks - (s.ticks % TICKS_PER_DAY))),
  },
  methods: {
    ...dateMethods((self, t) => new CsDateTimeOffset(t, (self as CsDateTimeOffset).offsetMinutes), dtoTicks),
    ToUnixTimeSeconds: (_rt, s: CsDateTimeOffset) => {
      const t = s.utcTicks - UNIX_EPOCH_TICKS;
      return t >= 0n ? t / TICKS_PER_SECOND : -((-t + TICKS_PER_SECOND - 1n) / TICKS_PER_SECOND);
    },
    ToUnixTimeMilliseconds: (_rt, s: CsDateTimeOffset) => {
      const t = s.utcTicks - UNIX_EPOCH_TICKS;
      return t >= 0n ? t / TICKS_PER_MS : -((-t + TICKS_PER_MS - 1n) / TICKS_PER_MS);
    },
    ToUniversalTime: (_rt, s: CsDateTimeOffset) => new CsDateTimeOffset(s.utcTicks, 0),
    ToOffset: (_rt, s: CsDateTimeOffset, args) => {
      const off = Number((args[0] as CsTimeSpan).ticks / (60n * TICKS_PER_SECOND));
      return new CsDateTimeOffset(s.utcTicks + BigInt(off) * 60n * TICKS_PER_SECOND, off);
    },
    ToString: (_rt, s: CsDateTimeOffset, args) =>
      formatDateTimeOffset(s, args.length ? optStr(args[0]) : null),
  },
  staticProps: {
    UtcNow: prop(() => new CsDateTimeOffset(nowTicks(), 0)),
    Now: prop(() => new CsDateTimeOffset(nowTicks(), 0)),
    MinValue: prop(() => new CsDateTimeOffset(0n, 0)),
    MaxValue: prop(() => new CsDateTimeOffset(MAX_TICKS, 0)),
    UnixEpoch: prop(() => new CsDateTimeOffset(UNIX_EPOCH_TICKS, 0)),
  },
  staticMethods: {
    Parse: (_rt, _s, args) => parseDateTimeOffset(str(args[0])),
    FromUnixTimeSeconds: (_rt, _s, args) =>
      new CsDateTimeOffset(BigInt(args[0] as bigint | number) * TICKS_PER_SECOND + UNIX_EPOCH_TICKS, 0),
    FromUnixTimeMilliseconds: (_rt, _s, args) =>
      new CsDateTimeOffset(BigInt(args[0] as bigint | number) * TICKS_PER_MS + UNIX_EPOCH_TICKS, 0),
    TryParse: (_rt, _s, args) => {
      try {
        setOut(args[args.length - 1], parseDateTimeOffset(str(args[0])));
        return true;
      } catch (e) {
        if (!(e instanceof CsException)) throw e;
        setOut(args[args.length - 1], new CsDateTimeOffset(0n, 0));
        return false;
      }
    },
  },
});

const tsFrom =
  (unitMs: number): Method =>
  (_rt, _s, args) =>
    new CsTimeSpan(scaled(args[0], unitMs));
const total = (unitTicks: number) => prop((s: CsTimeSpan) => new CsDouble(Number(s.ticks) / unitTicks));
const part = (unitTicks: bigint, mod: bigint) => prop((s: CsTimeSpan) => Number((s.ticks / unitTicks) % mod));

export const TimeSpanType = defineType({
  name: 'TimeSpan',
  namespace: 'System',
  classes: [CsTimeSpan],
  defaultValue: new CsTimeSpan(0n),
  construct: (_rt, args) => {
    if (args.length === 1) return new CsTimeSpan(BigInt(args[0] as number | bigint));
    const n = args.map((a) => BigInt(int(a)));
    const [d, h, m, s, ms] =
      n.length === 3 ? [0n, n[0]!, n[1]!, n[2]!, 0n] : [n[0]!, n[1]!, n[2]!, n[3]!, n[4] ?? 0n];
    return new CsTimeSpan((((d * 24n + h) * 60n + m) * 60n + s) * TICKS_PER_SECOND + ms * TICKS_PER_MS);
  },
  props: {
    Ticks: prop((s: CsTimeSpan) => s.ticks),
    Days: prop((s: CsTimeSpan) => Number(s.ticks / TICKS_PER_DAY)),
    Hours: part(3600n * TICKS_PER_SECOND, 24n),
    Minutes: part(60n * TICKS_PER_SECOND, 60n),
    Seconds: part(TICKS_PER_SECOND, 60n),
    Milliseconds: part(TICKS_PER_MS, 1000n),
    TotalDays: total(864_000_000_000),
    TotalHours: total(36_000_000_000),
    TotalMinutes: total(600_000_000),
    TotalSeconds: total(10_000_000),
    TotalMilliseconds: total(10_000),
  },
  methods: {
    ToString: (_rt, s: CsTimeSpan, args) => formatTimeSpan(s, args.length ? optStr(args[0]) : null),
    Add: (_rt, s: CsTimeSpan, args) => new CsTimeSpan(s.ticks + (args[0] as CsTimeSpan).ticks),
    Subtract: (_rt, s: CsTimeSpan, args) => new CsTimeSpan(s.ticks - (args[0] as CsTimeSpan).ticks),
    Negate: (_rt, s: CsTimeSpan) => new CsTimeSpan(-s.ticks),
    Duration: (_rt, s: CsTimeSpan) => new CsTimeSpan(s.ticks < 0n ? -s.ticks : s.ticks),
  },
  staticProps: {
    Zero: prop(() => new CsTimeSpan(0n)),
    MaxValue: prop(() => new CsTimeSpan(9223372036854775807n)),
    MinValue: prop(() => new CsTimeSpan(-9223372036854775808n)),
  },
  staticMethods: {
    FromDays: tsFrom(86_400_000),
    FromHours: tsFrom(3_600_000),
    FromMinutes: tsFrom(60_000),
    FromSeconds: tsFrom(1000),
    FromMilliseconds: tsFrom(1),
    FromTicks: (_rt, _s, args) => new CsTimeSpan(BigInt(args[0] as number | bigint)),
    Parse: (_rt, _s, args) => parseTimeSpan(str(args[0])),
    TryParse: (_rt, _s, args) => {
      try {
        setOut(args[args.length - 1], parseTimeSpan(str(args[0])));
        return true;
      } catch (e) {
        if (!(e instanceof CsException)) throw e;
        setOut(args[args.length - 1], new CsTimeSpan(0n));
        return false;
      }
    },
  },
});
