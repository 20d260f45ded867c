/** .NET DateTime / DateTimeOffset / TimeSpan formatting and parsing, invariant culture. */
import { argError, formatError } from './core.js';
import {
  CsDateTime,
  CsDateTimeOffset,
  CsTimeSpan,
  type DateTimeKind,
  TICKS_PER_MS,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
} from './values.js';

const DAY_NAMES = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const STANDARD: Record<string, string> = {
  d: 'MM/dd/yyyy',
  D: 'dddd, dd MMMM yyyy',
  f: 'dddd, dd MMMM yyyy HH:mm',
  F: 'dddd, dd MMMM yyyy HH:mm:ss',
  g: 'MM/dd/yyyy HH:mm',
  G: 'MM/dd/yyyy HH:mm:ss',
  m: 'MMMM dd',
  M: 'MMMM dd',
  o: "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
  O: "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffK",
  r: "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'",
  R: "ddd, dd MMM yyyy HH':'mm':'ss 'GMT'",
  s: "yyyy'-'MM'-'dd'T'HH':'mm':'ss",
  t: 'HH:mm',
  T: 'HH:mm:ss',
  u: "yyyy'-'MM'-'dd HH':'mm':'ss'Z'",
  U: 'dddd, dd MMMM yyyy HH:mm:ss',
  y: 'yyyy MMMM',
  Y: 'yyyy MMMM',
};

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  fraction: number; // ticks within the second, 0..9_999_999
  dayOfWeek: number;
}

export function partsOf(ticks: bigint): Parts {
  const ms = Number(
    (ticks -
      UNIX_EPOCH_TICKS -
      ((((ticks - UNIX_EPOCH_TICKS) % TICKS_PER_MS) + TICKS_PER_MS) % TICKS_PER_MS)) /
      TICKS_PER_MS,
  );
  const d = new Date(ms);
  const fraction = Number(((ticks % TICKS_PER_SECOND) + TICKS_PER_SECOND) % TICKS_PER_SECOND);
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    fraction,
    dayOfWeek: d.getUTCDay(),
  };
}

export function ticksOf(
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  ms = 0,
): bigint {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw argError(
      'Year, Month, and Day parameters describe an un-representable DateTime.',
      'ArgumentOutOfRangeException',
    );
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return BigInt(d.getTime()) * TICKS_PER_MS + UNIX_EPOCH_TICKS + BigInt(Math.round(ms * 10_000));
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
}

export function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

function offsetText(minutes: number, width: 1 | 2 | 3): string {
  const sign = minutes < 0 ? '-' : '+';
  const a = Math.abs(minutes);
  const h = Math.floor(a / 60);
  if (width === 1) return `${sign}${h}`;
  if (width === 2) return `${sign}${pad(h, 2)}`;
  return `${sign}${pad(h, 2)}:${pad(a % 60, 2)}`;
}

/**
 * Formats local ticks. `kind` decides K for DateTime; `offset` (minutes) is set for DateTimeOffset, where K and zzz
 * print the offset.
 */
export function formatDateTicks(
  ticks: bigint,
  format: string,
  kind: DateTimeKind,
  offset: number | null,
): string {
  let fmt = format;
  let t = ticks;
  if (fmt.length === 1) {
    const std = STANDARD[fmt];
    if (std === undefined) throw formatError(`Input string '${format}' was not in a correct format.`);
    // DateTimeOffset R/r/u print UTC; 'U' prints UTC for DateTime as well.
    if (offset !== null && (fmt === 'r' || fmt === 'R' || fmt === 'u')) {
      t = ticks - BigInt(offset) * 60n * TICKS_PER_SECOND;
      offset = 0;
    }
    if (fmt === 'o' || fmt === 'O') {
      if (offset === null && kind === 'Unspecified') fmt = std.replace('K', '');
      else fmt = std;
    } else {
      fmt = std;
    }
  }
  const p = partsOf(t);
  let out = '';
  for (let i = 0; i < fmt.length; ) {
    const ch = fmt[i]!;
    let n = 1;
    while (fmt[i + n] === ch) n++;
    switch (ch) {
      case 'y':
        out += n === 1 ? String(p.year % 100) : n === 2 ? pad(p.year % 100, 2) : pad(p.year, n);
        break;
      case 'M':
        out +=
          n === 1
            ? String(p.month)
            : n === 2
              ? pad(p.month, 2)
              : n === 3
                ? MONTH_NAMES[p.month - 1]!.slice(0, 3)
                : MONTH_NAMES[p.month - 1]!;
        break;
      case 'd':
        out +=
          n === 1
            ? String(p.day)
            : n === 2
              ? pad(p.day, 2)
              : n === 3
                ? DAY_NAMES[p.dayOfWeek]!.slice(0, 3)
                : DAY_NAMES[p.dayOfWeek]!;
        break;
      case 'H':
        out += n === 1 ? String(p.hour) : pad(p.hour, 2);
        break;
      case 'h': {
        const h12 = p.hour % 12 === 0 ? 12 : p.hour % 12;
        out += n === 1 ? String(h12) : pad(h12, 2);
        break;
      }
      case 'm':
        out += n === 1 ? String(p.minute) : pad(p.minute, 2);
        break;
      case 's':
        out += n === 1 ? String(p.second) : pad(p.second, 2);
        break;
      case 'f':
      case 'F': {
        if (n > 7) throw formatError('Input string was not in a correct format.');
        let digits = pad(p.fraction, 7).slice(0, n);
        if (ch === 'F') digits = digits.replace(/0+$/, '');
        // .NET drops the separator before an all-zero F fraction ("ss.FFF" → "05", not "05.").
        if (ch === 'F' && digits === '' && out.endsWith('.')) out = out.slice(0, -1);
        out += digits;
        break;
      }
      case 't':
        out += n === 1 ? (p.hour < 12 ? 'A' : 'P') : p.hour < 12 ? 'AM' : 'PM';
        break;
      case 'z':
        out += offsetText(offset ?? 0, Math.min(n, 3) as 1 | 2 | 3);
        break;
      case 'K':
        out +=
          offset !== null ? offsetText(offset, 3) : kind === 'Utc' ? 'Z' : kind === 'Local' ? '+00:00' : '';
        n = 1;
        break;
      case 'g':
        out += 'A.D.';
        break;
      case ':':
      case '/':
        out += ch;
        n = 1;
        break;
      case "'":
      case '"': {
        const end = fmt.indexOf(ch, i + 1);
        if (end < 0) throw formatError(`Cannot find a matching quote character for the character '${ch}'.`);
        out += fmt.slice(i + 1, end);
        i = end + 1;
        continue;
      }
      case '\\':
        out += fmt[i + 1] ?? '';
        i += 2;
        continue;
      case '%':
        n = 1;
        break;
      default:
        out += ch.repeat(n);
    }
    i += n;
  }
  return out;
}

export function formatDateTime(d: CsDateTime, format: string | null | undefined): string {
  return formatDateTicks(d.ticks, format || 'G', d.kind, null);
}

export function formatDateTimeOffset(d: CsDateTimeOffset, format: string | null | undefined): string {
  return formatDateTicks(d.ticks, format || 'MM/dd/yyyy HH:mm:ss zzz', 'Unspecified', d.offsetMinutes);
}

/** TimeSpan.ToString() ("c"), and the custom formats built from d h m s f with escaped literals. */
export function formatTimeSpan(ts: CsTimeSpan, format: string | null | undefined): string {
  const neg = ts.ticks < 0n;
  const t = neg ? -ts.ticks : ts.ticks;
  const totalSeconds = t / TICKS_PER_SECOND;
  const frac = Number(t % TICKS_PER_SECOND);
  const days = Number(totalSeconds / 86400n);
  const hours = Number((totalSeconds / 3600n) % 24n);
  const minutes = Number((totalSeconds / 60n) % 60n);
  const seconds = Number(totalSeconds % 60n);
  if (!format || format === 'c' || format === 't' || format === 'T' || format === 'g' || format === 'G') {
    if (format === 'g') {
      const f = frac ? `.${pad(frac, 7).replace(/0+$/, '')}` : '';
      return `${neg ? '-' : ''}${days ? `${days}:` : ''}${hours}:${pad(minutes, 2)}:${pad(seconds, 2)}${f}`;
    }
    if (format === 'G') {
      return `${neg ? '-' : ''}${days}:${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}.${pad(frac, 7)}`;
    }
    return `${neg ? '-' : ''}${days ? `${days}.` : ''}${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}${frac ? `.${pad(frac, 7)}` : ''}`;
  }
  let out = '';
  for (let i = 0; i < format.length; ) {
    const ch = format[i]!;
    let n = 1;
    while (format[i + n] === ch) n++;
    switch (ch) {
      case 'd':
        out += pad(days, n);
        break;
      case 'h':
        out += n === 1 ? String(hours) : pad(hours, 2);
        break;
      case 'm':
        out += n === 1 ? String(minutes) : pad(minutes, 2);
        break;
      case 's':
        out += n === 1 ? String(seconds) : pad(seconds, 2);
        break;
      case 'f':
        out += pad(frac, 7).slice(0, n);
        break;
      case 'F':
        out += pad(frac, 7).slice(0, n).replace(/0+$/, '');
        break;
      case '\\':
        out += format[i + 1] ?? '';
        i += 2;
        continue;
      case "'":
      case '"': {
        const end = format.indexOf(ch, i + 1);
        if (end < 0) throw formatError('Input string was not in a correct format.');
        out += format.slice(i + 1, end);
        i = end + 1;
        continue;
      }
      default:
        throw formatError('Input string was not in a correct format.');
    }
    i += n;
  }
  return out;
}

/**
 * DateTime.Parse: ISO 8601 (with or without offset), RFC 1123, and "MM/dd/yyyy[ HH:mm:ss]". Strings with an offset
 * or Z are converted to local time (= UTC on the gateway) with Kind Local, as .NET does.
 */
export function parseDateTime(s: string): CsDateTime {
  const text = s.trim();
  let m =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
      text,
    );
  if (m) {
    const frac = m[7] ? BigInt(m[7].padEnd(7, '0')) : 0n;
    let ticks: bigint;
    try {
      ticks = ticksOf(+m[1]!, +m[2]!, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0)) + frac;
    } catch {
      throw formatError(`String '${s}' was not recognized as a valid DateTime.`);
    }
    if (m[8]) {
      const off = m[8].toUpperCase() === 'Z' ? 0 : parseOffset(m[8]);
      return new CsDateTime(ticks - BigInt(off) * 60n * TICKS_PER_SECOND, 'Local');
    }
    return new CsDateTime(ticks, 'Unspecified');
  }
  m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s*(AM|PM)?)?$/i.exec(text);
  if (m) {
    let hour = +(m[4] ?? 0);
    if (m[7]) hour = (hour % 12) + (m[7].toUpperCase() === 'PM' ? 12 : 0);
    try {
      return new CsDateTime(ticksOf(+m[3]!, +m[1]!, +m[2]!, hour, +(m[5] ?? 0), +(m[6] ?? 0)), 'Unspecified');
    } catch {
      throw formatError(`String '${s}' was not recognized as a valid DateTime.`);
    }
  }
  if (/^[A-Za-z]{3}, \d{1,2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms)) return new CsDateTime(BigInt(ms) * TICKS_PER_MS + UNIX_EPOCH_TICKS, 'Local');
  }
  throw formatError(`String '${s}' was not recognized as a valid DateTime.`);
}

function parseOffset(text: string): number {
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(text)!;
  return (m[1] === '-' ? -1 : 1) * (+m[2]! * 60 + +m[3]!);
}

export function parseDateTimeOffset(s: string): CsDateTimeOffset {
  const text = s.trim();
  const m = /(Z|[+-]\d{2}:?\d{2})$/i.exec(text);
  const dt = parseDateTime(m ? text.slice(0, m.index).replace(/[T ]$/, '') : text);
  const off = m ? (m[1]!.toUpperCase() === 'Z' ? 0 : parseOffset(m[1]!)) : 0;
  return new CsDateTimeOffset(dt.ticks, off);
}

export function parseTimeSpan(s: string): CsTimeSpan {
  const m = /^\s*(-)?(?:(\d+)\.)?(\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,7}))?)?\s*$/.exec(s);
  const d = /^\s*(-)?(\d+)\s*$/.exec(s);
  if (d) return new CsTimeSpan((d[1] ? -1n : 1n) * BigInt(d[2]!) * 86400n * TICKS_PER_SECOND);
  if (!m) throw formatError(`String '${s}' was not recognized as a valid TimeSpan.`);
  const total =
    ((BigInt(m[2] ?? 0) * 24n + BigInt(m[3]!)) * 60n + BigInt(m[4]!)) * 60n * TICKS_PER_SECOND +
    BigInt(m[5] ?? 0) * TICKS_PER_SECOND +
    BigInt((m[6] ?? '').padEnd(7, '0') || '0');
  return new CsTimeSpan(m[1] ? -total : total);
}
