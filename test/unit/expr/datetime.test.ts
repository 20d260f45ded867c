import { describe, expect, it } from 'vitest';
import { failure, show } from '../../doubles/policy-context.js';

const d = 'new DateTime(2024, 2, 29, 13, 5, 9, 45, DateTimeKind.Utc)';

describe('DateTime, DateTimeOffset, TimeSpan', () => {
  it.each([
    [`${d}.ToString("o")`, '2024-02-29T13:05:09.0450000Z'],
    [`${d}.ToString("O")`, '2024-02-29T13:05:09.0450000Z'],
    [`new DateTime(2024, 1, 2).ToString("o")`, '2024-01-02T00:00:00.0000000'],
    [`${d}.ToString("R")`, 'Thu, 29 Feb 2024 13:05:09 GMT'],
    [`${d}.ToString("r")`, 'Thu, 29 Feb 2024 13:05:09 GMT'],
    [`${d}.ToString("s")`, '2024-02-29T13:05:09'],
    [`${d}.ToString("u")`, '2024-02-29 13:05:09Z'],
    [`${d}.ToString("yyyy-MM-ddTHH:mm:ssZ")`, '2024-02-29T13:05:09Z'],
    [`${d}.ToString("yyyy-MM-dd'T'HH:mm:ss.fffK")`, '2024-02-29T13:05:09.045Z'],
    [`${d}.ToString("dd/MM/yy h:mm tt")`, '29/02/24 1:05 PM'],
    [`${d}.ToString("dddd, MMMM d")`, 'Thursday, February 29'],
    [`${d}.ToString("ddd MMM")`, 'Thu Feb'],
    [`${d}.ToString("yyyyMMddHHmmss")`, '20240229130509'],
    [`${d}.ToString("FFF")`, '045'],
    [`${d}.ToString()`, '02/29/2024 13:05:09'],
    [`${d}.ToString("d")`, '02/29/2024'],
    [`${d}.ToString("t")`, '13:05'],
    [`${d}.Year + "-" + ${d}.Month + "-" + ${d}.Day`, '2024-2-29'],
    [`${d}.DayOfWeek`, 'Thursday'],
    [`${d}.DayOfYear`, '60'],
    [`${d}.Hour * 100 + ${d}.Minute`, '1305'],
    [`${d}.Millisecond`, '45'],
    [`${d}.Kind`, 'Utc'],
    [`${d}.AddDays(1).ToString("yyyy-MM-dd")`, '2024-03-01'],
    [`${d}.AddYears(1).ToString("yyyy-MM-dd")`, '2025-02-28'],
    [`${d}.AddMonths(-1).ToString("yyyy-MM-dd")`, '2024-01-29'],
    [`${d}.AddHours(-13).ToString("HH:mm")`, '00:05'],
    [`${d}.AddSeconds(1.5).ToString("ss.fff")`, '10.545'],
    [`${d}.AddMinutes(60).Hour`, '14'],
    [`${d}.Date.ToString("o")`, '2024-02-29T00:00:00.0000000Z'],
    [`${d}.Ticks`, '638448087090450000'],
    [`(${d} - new DateTime(2024, 2, 28, 13, 5, 9, 45, DateTimeKind.Utc)).TotalHours`, '24'],
    [`(${d} - new DateTime(1970, 1, 1)).TotalSeconds`, '1709211909.045'],
    [`${d} > new DateTime(2024, 1, 1)`, 'True'],
    [`${d}.Subtract(TimeSpan.FromDays(29)).ToString("MM-dd")`, '01-31'],
    [
      `DateTime.Parse("2024-05-06T07:08:09Z").ToUniversalTime().ToString("o")`,
      '2024-05-06T07:08:09.0000000Z',
    ],
    [`DateTime.Parse("2024-05-06").ToString("yyyy/MM/dd")`, '2024/05/06'],
    [`DateTime.ParseExact("20240506", "yyyyMMdd", null).Day`, '6'],
    [`DateTime.TryParse("nope", out var x)`, 'False'],
    [`DateTime.DaysInMonth(2023, 2)`, '28'],
    [`DateTime.IsLeapYear(2000)`, 'True'],
    [`DateTime.MinValue.Ticks`, '0'],
    [`DateTime.UtcNow.Kind`, 'Utc'],
    [`DateTime.UtcNow.Year >= 2024`, 'True'],
    [`new DateTimeOffset(2024, 1, 1, 0, 0, 0, TimeSpan.Zero).ToUnixTimeSeconds()`, '1704067200'],
    [`DateTimeOffset.FromUnixTimeSeconds(1704067200).ToString("o")`, '2024-01-01T00:00:00.0000000+00:00'],
    [`DateTimeOffset.FromUnixTimeMilliseconds(1704067200123).Millisecond`, '123'],
    [`new DateTimeOffset(2024, 1, 1, 10, 0, 0, TimeSpan.FromHours(2)).UtcDateTime.Hour`, '8'],
    [
      `new DateTimeOffset(2024, 1, 1, 10, 0, 0, TimeSpan.FromHours(2)).ToString("yyyy-MM-ddTHH:mm:sszzz")`,
      '2024-01-01T10:00:00+02:00',
    ],
    [`DateTimeOffset.Parse("2024-01-01T10:00:00+02:00").ToUnixTimeSeconds()`, '1704096000'],
    [`DateTimeOffset.UtcNow.ToUnixTimeSeconds() > 1700000000L`, 'True'],
    [`TimeSpan.FromMinutes(90).ToString()`, '01:30:00'],
    [`TimeSpan.FromDays(1.5).ToString()`, '1.12:00:00'],
    [`TimeSpan.FromMilliseconds(1500).ToString()`, '00:00:01.5000000'],
    [`TimeSpan.FromSeconds(-5).ToString()`, '-00:00:05'],
    [`TimeSpan.FromMinutes(90).TotalHours`, '1.5'],
    [`TimeSpan.FromMinutes(90).Hours`, '1'],
    [`TimeSpan.FromMinutes(90).Minutes`, '30'],
    [`new TimeSpan(1, 2, 3).TotalSeconds`, '3723'],
    [`new TimeSpan(1, 2, 3, 4).ToString("c")`, '1.02:03:04'],
    [`new TimeSpan(1, 2, 3).ToString(@"hh\\:mm")`, '01:02'],
    [`TimeSpan.Parse("01:02:03").TotalMinutes`, '62.05'],
    [`(TimeSpan.FromHours(1) + TimeSpan.FromMinutes(1)).TotalMinutes`, '61'],
    [`TimeSpan.FromHours(2) > TimeSpan.FromMinutes(119)`, 'True'],
    [`TimeSpan.Zero.Ticks`, '0'],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it.each([
    ['DateTime.Parse("not a date")', 'FormatException'],
    ['new DateTime(2023, 2, 29)', 'ArgumentOutOfRangeException'],
    ['DateTime.MaxValue.AddDays(1)', 'ArgumentOutOfRangeException'],
    [`${d}.ToString("q")`, 'FormatException'],
  ])('%s fails with %s', (expr, expected) => {
    expect(failure(expr)).toContain(expected);
  });
});

describe('DateTime.ParseExact runs its pattern on the linear-time engine (issue 29)', () => {
  // The format became a JavaScript RegExp, which backtracks: 24 one-or-two-digit fields ("dHdH…") on 49 digits took
  // 2 s, and each field more doubles that. 30 fields would take minutes; on RE2 they answer at once.
  const fields = 'dH'.repeat(15);

  it.each([
    [`DateTime.ParseExact(new string('1', 61) + "x", "${fields}", null)`, 'FormatException'],
    [`DateTime.TryParseExact(new string('1', 61) + "x", "${fields}", null, out var d)`, 'False'],
    [`DateTime.ParseExact(new string('1', 60), "${fields}", null).Day`, '11'],
    [`DateTime.ParseExact("2024-05-06T07", "yyyy-MM-dd'T'HH", null).Hour`, '7'],
    [`DateTime.ParseExact("06.05.2024", "dd.MM.yyyy", null).Month`, '5'],
  ])('%s → %s', (expr, expected) => {
    const out = expected === 'FormatException' ? failure(expr) : show(expr);
    expect(out).toContain(expected);
  });

  it.each([
    // An unclosed quote sent the format scan back to its start for ever, growing the pattern until memory ran out.
    ['DateTime.ParseExact("x", "\'abc", null)', 'Cannot find a matching quote character'],
    [`DateTime.ParseExact("1", new string('d', 300), null)`, 'more than the 256 a date format may have'],
  ])('%s fails with FormatException: %s', (expr, expected) => {
    const message = failure(expr);
    expect(message).toContain('FormatException');
    expect(message).toContain(expected);
  });
});
