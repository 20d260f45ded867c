import {
  CsDateTimeOffset,
  formatDateTimeOffset,
  parseDateTimeOffset,
  TICKS_PER_MS,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
} from '../../expr/index.js';

/**
 * The Liquid `Date` filter of API Management's "C# mode" (DotLiquid with .NET date formats): the docs' example is
 * `{{body.foo.startDateTime| Date:"yyyyMMddTHH:mm:ssZ"}}`
 * (https://learn.microsoft.com/azure/api-management/set-body-policy#using-liquid-templates-with-set-body).
 *
 * It follows DotLiquid's StandardFilters.Date: a number is Unix seconds; "now" and "today" are the current time; any
 * other value is parsed as a DateTimeOffset, and a value that does not parse comes back as it was; no format gives
 * the value back. The format is a .NET one, run through the expression library's formatter, so `Date` and
 * `DateTime.ToString(…)` in an expression agree. The gateway's local time is UTC.
 */
export function liquidDate(input: unknown, format: unknown): string | null {
  if (input === null || input === undefined) return null;
  const text = String(input);
  const pattern =
    typeof format === 'string' ? format : format === null || format === undefined ? '' : String(format);
  if (pattern.trim() === '') return text;
  let date: CsDateTimeOffset;
  if (typeof input === 'number') {
    date = new CsDateTimeOffset(BigInt(Math.round(input)) * TICKS_PER_SECOND + UNIX_EPOCH_TICKS, 0);
  } else if (/^(now|today)$/i.test(text)) {
    date = new CsDateTimeOffset(BigInt(Date.now()) * TICKS_PER_MS + UNIX_EPOCH_TICKS, 0);
  } else {
    try {
      date = parseDateTimeOffset(text);
    } catch {
      return text;
    }
  }
  return formatDateTimeOffset(date, pattern);
}
