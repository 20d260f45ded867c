/**
 * TimeZoneInfo and the obsolete TimeZone. Expected values from the .NET API reference
 * (https://learn.microsoft.com/dotnet/api/system.timezoneinfo and its members' pages) and the time-zone rules they
 * state: ConvertTimeFromUtc / ConvertTime give the destination's wall time, Kind Utc / Local / Unspecified as the
 * destination is TimeZoneInfo.Utc / .Local / another zone; a DateTime whose Kind does not match the source zone, or
 * that a clock change skips, is an ArgumentException; an ambiguous time is taken as the source's standard time;
 * FindSystemTimeZoneById throws TimeZoneNotFoundException for an unknown id. Zone rules: US Pacific is UTC-8, -7 in
 * daylight time from the second Sunday of March 2:00 to the first Sunday of November 2:00; Tokyo +9 and India +5:30,
 * without daylight time; Berlin +1, +2 in summer. The gateway's local zone is UTC.
 */
import { describe, expect, it } from 'vitest';
import { failure, show, showBlock } from '../../doubles/policy-context.js';

const PST = 'TimeZoneInfo.FindSystemTimeZoneById("Pacific Standard Time")';
const utc = (y: number, mo: number, d: number, h: number, mi = 0) =>
  `new DateTime(${y}, ${mo}, ${d}, ${h}, ${mi}, 0, DateTimeKind.Utc)`;

describe('TimeZoneInfo', () => {
  it.each([
    // Windows ids (API Management's hosts) and IANA ids both resolve; the zone keeps the id asked for.
    [`${PST}.Id`, 'Pacific Standard Time'],
    ['TimeZoneInfo.FindSystemTimeZoneById("America/Los_Angeles").Id', 'America/Los_Angeles'],
    [`${PST}.BaseUtcOffset`, '-08:00:00'],
    ['TimeZoneInfo.FindSystemTimeZoneById("India Standard Time").BaseUtcOffset', '05:30:00'],
    ['TimeZoneInfo.FindSystemTimeZoneById("Tokyo Standard Time").SupportsDaylightSavingTime', 'False'],
    [`${PST}.SupportsDaylightSavingTime`, 'True'],
    [`${PST}.StandardName`, 'Pacific Standard Time'],
    [`${PST}.DaylightName`, 'Pacific Daylight Time'],
    [`${PST}.DisplayName.StartsWith("(UTC-08:00) ")`, 'True'],
    ['TimeZoneInfo.Utc.Id', 'UTC'],
    ['TimeZoneInfo.Utc.DisplayName', '(UTC) Coordinated Universal Time'],
    ['TimeZoneInfo.Local.BaseUtcOffset', '00:00:00'],
    ['TimeZoneInfo.FindSystemTimeZoneById("UTC") == TimeZoneInfo.Utc', 'True'],
    // ConvertTimeFromUtc: winter and summer in Pacific time.
    [
      `TimeZoneInfo.ConvertTimeFromUtc(${utc(2024, 1, 15, 12)}, ${PST}).ToString("yyyy-MM-dd HH:mm")`,
      '2024-01-15 04:00',
    ],
    [
      `TimeZoneInfo.ConvertTimeFromUtc(${utc(2024, 7, 15, 12)}, ${PST}).ToString("yyyy-MM-dd HH:mm")`,
      '2024-07-15 05:00',
    ],
    [`TimeZoneInfo.ConvertTimeFromUtc(${utc(2024, 7, 15, 12)}, ${PST}).Kind`, 'Unspecified'],
    [
      `TimeZoneInfo.ConvertTime(${utc(2024, 7, 15, 12)}, TimeZoneInfo.FindSystemTimeZoneById("W. Europe Standard Time")).Hour`,
      '14',
    ],
    [`TimeZoneInfo.ConvertTime(${utc(2024, 7, 15, 12)}, TimeZoneInfo.Utc).Kind`, 'Utc'],
    [`TimeZoneInfo.ConvertTime(${utc(2024, 7, 15, 12)}, TimeZoneInfo.Local).Kind`, 'Local'],
    // ConvertTimeToUtc and ConvertTime between two zones.
    [`TimeZoneInfo.ConvertTimeToUtc(new DateTime(2024, 1, 15, 4, 0, 0), ${PST}).ToString("HH:mm")`, '12:00'],
    [`TimeZoneInfo.ConvertTimeToUtc(new DateTime(2024, 1, 15, 4, 0, 0), ${PST}).Kind`, 'Utc'],
    [
      `TimeZoneInfo.ConvertTime(new DateTime(2024, 1, 15, 9, 0, 0), ${PST}, TimeZoneInfo.FindSystemTimeZoneById("Tokyo Standard Time")).ToString("yyyy-MM-dd HH:mm")`,
      '2024-01-16 02:00',
    ],
    [
      'TimeZoneInfo.ConvertTimeBySystemTimeZoneId(new DateTime(2024, 1, 15, 12, 0, 0, DateTimeKind.Utc), "India Standard Time").ToString("HH:mm")',
      '17:30',
    ],
    // DateTimeOffset: the same instant with the destination's offset.
    [
      'TimeZoneInfo.ConvertTime(new DateTimeOffset(2024, 1, 15, 12, 0, 0, TimeSpan.Zero), TimeZoneInfo.FindSystemTimeZoneById("Asia/Tokyo")).ToString("yyyy-MM-dd HH:mm zzz")',
      '2024-01-15 21:00 +09:00',
    ],
    // GetUtcOffset and IsDaylightSavingTime: Unspecified is the zone's own wall time.
    [`${PST}.GetUtcOffset(new DateTime(2024, 7, 1))`, '-07:00:00'],
    [`${PST}.GetUtcOffset(${utc(2024, 1, 1, 0)})`, '-08:00:00'],
    [`${PST}.IsDaylightSavingTime(new DateTime(2024, 7, 1))`, 'True'],
    [`${PST}.IsDaylightSavingTime(new DateTime(2024, 12, 1))`, 'False'],
    // 2024-03-10 02:30 is skipped in Pacific time; 2024-11-03 01:30 happens twice.
    [`${PST}.IsInvalidTime(new DateTime(2024, 3, 10, 2, 30, 0))`, 'True'],
    [`${PST}.IsAmbiguousTime(new DateTime(2024, 11, 3, 1, 30, 0))`, 'True'],
    [`${PST}.IsAmbiguousTime(new DateTime(2024, 11, 3, 3, 30, 0))`, 'False'],
    [`TimeZoneInfo.ConvertTimeToUtc(new DateTime(2024, 11, 3, 1, 30, 0), ${PST}).ToString("HH:mm")`, '09:30'],
    [`${PST}.GetAmbiguousTimeOffsets(new DateTime(2024, 11, 3, 1, 30, 0)).Length`, '2'],
    // CreateCustomTimeZone: a fixed offset.
    [
      'TimeZoneInfo.ConvertTimeFromUtc(new DateTime(2024, 1, 1, 0, 0, 0, DateTimeKind.Utc), TimeZoneInfo.CreateCustomTimeZone("X", TimeSpan.FromHours(3), "X", "X")).Hour',
      '3',
    ],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });

  it('a time a clock change skips is an ArgumentException', () => {
    expect(failure(`TimeZoneInfo.ConvertTimeToUtc(new DateTime(2024, 3, 10, 2, 30, 0), ${PST})`)).toContain(
      'ArgumentException: The supplied DateTime represents an invalid time.',
    );
  });

  it('a DateTime whose Kind does not match the source zone is an ArgumentException', () => {
    expect(failure(`TimeZoneInfo.ConvertTime(${utc(2024, 1, 1, 0)}, ${PST}, TimeZoneInfo.Utc)`)).toContain(
      'ArgumentException: The conversion could not be completed because the supplied DateTime did not have the Kind property set correctly.',
    );
    expect(failure(`TimeZoneInfo.ConvertTimeFromUtc(DateTime.Now, ${PST})`)).toContain('ArgumentException');
  });

  it('an unknown id is a TimeZoneNotFoundException', () => {
    expect(failure('TimeZoneInfo.FindSystemTimeZoneById("Mars/Olympus_Mons")')).toContain(
      "TimeZoneNotFoundException: The time zone ID 'Mars/Olympus_Mons' was not found on the local computer.",
    );
    expect(
      showBlock(
        'try { TimeZoneInfo.FindSystemTimeZoneById("Nowhere Standard Time"); return "found"; } catch (TimeZoneNotFoundException) { return "not found"; }',
      ),
    ).toBe('not found');
  });

  it('lists the system zones, ordered by offset', () => {
    expect(
      show(
        'TimeZoneInfo.GetSystemTimeZones().First().BaseUtcOffset < TimeZoneInfo.GetSystemTimeZones().Last().BaseUtcOffset',
      ),
    ).toBe('True');
    expect(show('TimeZoneInfo.GetSystemTimeZones().Any(z => z.Id == "Europe/Berlin")')).toBe('True');
  });
});

describe("TimeZone (obsolete): the gateway's zone is UTC", () => {
  it.each([
    ['TimeZone.CurrentTimeZone.GetUtcOffset(DateTime.Now)', '00:00:00'],
    ['TimeZone.CurrentTimeZone.IsDaylightSavingTime(new DateTime(2024, 7, 1))', 'False'],
    ['TimeZone.CurrentTimeZone.StandardName', 'Coordinated Universal Time'],
    [
      'TimeZone.CurrentTimeZone.ToUniversalTime(new DateTime(2024, 7, 1, 10, 0, 0, DateTimeKind.Local)).Kind',
      'Utc',
    ],
    [
      'TimeZone.CurrentTimeZone.ToUniversalTime(new DateTime(2024, 7, 1, 10, 0, 0, DateTimeKind.Local)).Hour',
      '10',
    ],
    [
      'TimeZone.CurrentTimeZone.ToLocalTime(new DateTime(2024, 7, 1, 10, 0, 0, DateTimeKind.Utc)).Kind',
      'Local',
    ],
  ])('%s → %s', (expr, expected) => {
    expect(show(expr)).toBe(expected);
  });
});
