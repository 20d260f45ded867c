/**
 * System.TimeZoneInfo on the runtime's ICU time-zone database (Intl): FindSystemTimeZoneById takes an IANA id
 * (`Europe/Berlin`) or a Windows id (`W. Europe Standard Time`, the ids API Management's Windows hosts use), the
 * latter mapped to IANA by the CLDR windowsZones table (package windows-iana), as .NET does on ICU; the zone keeps the
 * id it was asked for. Conversions follow .NET's rules: the gateway's local zone is UTC, a DateTime's Kind must match
 * the source zone, a time skipped by a clock change is an ArgumentException, an ambiguous one is taken as standard
 * time, and the result's Kind is Utc, Local or Unspecified as the destination is TimeZoneInfo.Utc, .Local or another.
 * Names come from ICU in English: StandardName "Pacific Standard Time", DisplayName "(UTC-08:00) Pacific Time".
 * https://learn.microsoft.com/dotnet/api/system.timezoneinfo
 */
import { argError, type CsException, defineType, prop } from '../runtime/core.js';
import { CsDateTime, CsDateTimeOffset, CsTimeSpan } from '../runtime/values.js';
import { str } from './helpers.js';
import {
  baseUtcOffset,
  CsTimeZoneInfo,
  findZone,
  LOCAL_ZONE,
  minutesToTicks,
  offsetAt,
  offsetsForWallTime,
  standardOffset,
  supportsDaylight,
  systemZones,
  TICKS_PER_MINUTE,
  ticksToMs,
  UTC_ZONE,
  yearOf,
  type ZoneNames,
} from './time-zone-database.js';

const invalidTime = (): CsException =>
  argError(
    "The supplied DateTime represents an invalid time.  For example, when the clock is adjusted forward, any time in the period that is skipped is invalid. (Parameter 'dateTime')",
  );

const kindMismatch = (): CsException =>
  argError(
    "The conversion could not be completed because the supplied DateTime did not have the Kind property set correctly.  For example, when the Kind property is DateTimeKind.Local, the source time zone must be TimeZoneInfo.Local. (Parameter 'sourceTimeZone')",
  );

/** DateTimeKind the zone stands for in a converted DateTime (GetCorrespondingKind: by reference). */
const kindOf = (zone: CsTimeZoneInfo): 'Utc' | 'Local' | 'Unspecified' =>
  zone === UTC_ZONE ? 'Utc' : zone === LOCAL_ZONE ? 'Local' : 'Unspecified';

/** A wall-clock time of the zone as UTC ticks; skipped times throw, repeated ones are standard time. */
function wallToUtcTicks(zone: CsTimeZoneInfo, ticks: bigint): bigint {
  const offsets = offsetsForWallTime(zone, ticksToMs(ticks));
  if (offsets.length === 0) throw invalidTime();
  return ticks - minutesToTicks(offsets[0]!);
}

function fromUtcTicks(zone: CsTimeZoneInfo, utcTicks: bigint): CsDateTime {
  return new CsDateTime(utcTicks + minutesToTicks(offsetAt(zone, ticksToMs(utcTicks))), kindOf(zone));
}

function zoneArg(v: unknown, what: string): CsTimeZoneInfo {
  if (v instanceof CsTimeZoneInfo) return v;
  throw argError(`Value cannot be null. (Parameter '${what}')`, 'ArgumentNullException');
}

function dateArg(v: unknown): CsDateTime | CsDateTimeOffset {
  if (v instanceof CsDateTime || v instanceof CsDateTimeOffset) return v;
  throw argError("Value cannot be null. (Parameter 'dateTime')", 'ArgumentNullException');
}

/** ConvertTime(DateTime, source, destination), with .NET's checks of Kind against the source zone. */
function convertDateTime(dt: CsDateTime, source: CsTimeZoneInfo, destination: CsTimeZoneInfo): CsDateTime {
  if (dt.kind !== 'Unspecified' && dt.kind !== kindOf(source)) throw kindMismatch();
  return fromUtcTicks(destination, wallToUtcTicks(source, dt.ticks));
}

function convertOffset(dto: CsDateTimeOffset, destination: CsTimeZoneInfo): CsDateTimeOffset {
  const offset = offsetAt(destination, ticksToMs(dto.utcTicks));
  return new CsDateTimeOffset(dto.utcTicks + minutesToTicks(offset), offset);
}

/** ConvertTime(DateTime, destination): the source is Utc for a Utc DateTime, the local zone (UTC) otherwise. */
function convertTo(v: unknown, destination: CsTimeZoneInfo): CsDateTime | CsDateTimeOffset {
  const d = dateArg(v);
  if (d instanceof CsDateTimeOffset) return convertOffset(d, destination);
  return convertDateTime(d, d.kind === 'Utc' ? UTC_ZONE : LOCAL_ZONE, destination);
}

/** GetUtcOffset / IsDaylightSavingTime of a DateTime: Utc and Local kinds are instants, Unspecified this zone's time. */
function instantOf(zone: CsTimeZoneInfo, v: unknown): number | null {
  const d = dateArg(v);
  if (d instanceof CsDateTimeOffset) return ticksToMs(d.utcTicks);
  if (d.kind !== 'Unspecified' || zone === UTC_ZONE) return ticksToMs(d.ticks);
  const offsets = offsetsForWallTime(zone, ticksToMs(d.ticks));
  return offsets.length === 0 ? null : ticksToMs(d.ticks - minutesToTicks(offsets[0]!));
}

function isDaylight(zone: CsTimeZoneInfo, v: unknown): boolean {
  const at = instantOf(zone, v);
  if (at === null) return false;
  return offsetAt(zone, at) > standardOffset(zone, yearOf(at));
}

const wallOffsets = (zone: CsTimeZoneInfo, v: unknown): number[] => {
  const d = dateArg(v);
  if (d instanceof CsDateTimeOffset) return offsetsForWallTime(zone, ticksToMs(d.ticks));
  // A Utc or Local DateTime is first converted into this zone, as .NET does.
  const wall = d.kind === 'Unspecified' ? d : fromUtcTicks(zone, d.ticks);
  return offsetsForWallTime(zone, ticksToMs(wall.ticks));
};

const namesOf = (z: CsTimeZoneInfo): ZoneNames => z.names;

function customZone(args: unknown[]): CsTimeZoneInfo {
  const id = str(args[0], 'id');
  const offset = args[1];
  if (!(offset instanceof CsTimeSpan))
    throw argError("Value cannot be null. (Parameter 'baseUtcOffset')", 'ArgumentNullException');
  if (
    offset.ticks % TICKS_PER_MINUTE !== 0n ||
    offset.ticks > 14n * 60n * TICKS_PER_MINUTE ||
    offset.ticks < -14n * 60n * TICKS_PER_MINUTE
  ) {
    throw argError(
      "The TimeSpan parameter must be within plus or minus 14.0 hours. (Parameter 'baseUtcOffset')",
      'ArgumentOutOfRangeException',
    );
  }
  const display = args[2] === undefined || args[2] === null ? id : str(args[2]);
  const standard = args[3] === undefined || args[3] === null ? id : str(args[3]);
  return new CsTimeZoneInfo(id, null, Number(offset.ticks / TICKS_PER_MINUTE), {
    display,
    standard,
    daylight: standard,
  });
}

const span = (minutes: number): CsTimeSpan => new CsTimeSpan(minutesToTicks(minutes));

export const TimeZoneInfoType = defineType({
  name: 'TimeZoneInfo',
  namespace: 'System',
  classes: [CsTimeZoneInfo],
  props: {
    Id: prop((z: CsTimeZoneInfo) => z.id),
    DisplayName: prop((z: CsTimeZoneInfo) => namesOf(z).display),
    StandardName: prop((z: CsTimeZoneInfo) => namesOf(z).standard),
    DaylightName: prop((z: CsTimeZoneInfo) => namesOf(z).daylight),
    BaseUtcOffset: prop((z: CsTimeZoneInfo) => span(baseUtcOffset(z))),
    SupportsDaylightSavingTime: prop((z: CsTimeZoneInfo) => supportsDaylight(z)),
    HasIanaId: prop((z: CsTimeZoneInfo) => z === UTC_ZONE || z === LOCAL_ZONE || z.iana === z.id),
  },
  methods: {
    GetUtcOffset: (_rt, z: CsTimeZoneInfo, args) => {
      const at = instantOf(z, args[0]);
      return span(at === null ? baseUtcOffset(z) : offsetAt(z, at));
    },
    IsDaylightSavingTime: (_rt, z: CsTimeZoneInfo, args) => isDaylight(z, args[0]),
    IsAmbiguousTime: (_rt, z: CsTimeZoneInfo, args) => wallOffsets(z, args[0]).length > 1,
    IsInvalidTime: (_rt, z: CsTimeZoneInfo, args) => {
      const d = dateArg(args[0]);
      return d instanceof CsDateTime && d.kind === 'Unspecified' && wallOffsets(z, d).length === 0;
    },
    GetAmbiguousTimeOffsets: (_rt, z: CsTimeZoneInfo, args) => {
      const offsets = wallOffsets(z, args[0]);
      if (offsets.length < 2)
        throw argError("The supplied DateTime is not in an ambiguous time range. (Parameter 'dateTime')");
      return offsets.map(span);
    },
    HasSameRules: (_rt, z: CsTimeZoneInfo, args) => {
      const o = zoneArg(args[0], 'other');
      return (z.iana ?? `${z.fixedOffsetMinutes}`) === (o.iana ?? `${o.fixedOffsetMinutes}`);
    },
    Equals: (_rt, z: CsTimeZoneInfo, args) =>
      args[0] instanceof CsTimeZoneInfo &&
      args[0].id.toUpperCase() === z.id.toUpperCase() &&
      (z.iana ?? '') === (args[0].iana ?? '') &&
      z.fixedOffsetMinutes === args[0].fixedOffsetMinutes,
    ToString: (_rt, z: CsTimeZoneInfo) => namesOf(z).display,
  },
  staticProps: {
    Utc: prop(() => UTC_ZONE),
    Local: prop(() => LOCAL_ZONE),
  },
  staticMethods: {
    FindSystemTimeZoneById: (_rt, _s, args) => findZone(str(args[0], 'id')),
    GetSystemTimeZones: (rt) => systemZones(rt),
    CreateCustomTimeZone: (_rt, _s, args) => customZone(args),
    ConvertTime: (_rt, _s, args) => {
      if (args.length === 3) {
        const d = dateArg(args[0]);
        const [source, destination] = [
          zoneArg(args[1], 'sourceTimeZone'),
          zoneArg(args[2], 'destinationTimeZone'),
        ];
        if (d instanceof CsDateTimeOffset) return convertOffset(d, destination);
        return convertDateTime(d, source, destination);
      }
      return convertTo(args[0], zoneArg(args[1], 'destinationTimeZone'));
    },
    ConvertTimeFromUtc: (_rt, _s, args) => {
      const d = dateArg(args[0]);
      if (d instanceof CsDateTime && d.kind === 'Local') throw kindMismatch();
      return fromUtcTicks(zoneArg(args[1], 'destinationTimeZone'), (d as CsDateTime).ticks);
    },
    ConvertTimeToUtc: (_rt, _s, args) => {
      const d = dateArg(args[0]) as CsDateTime;
      if (args.length === 1) return d.kind === 'Utc' ? d : convertDateTime(d, LOCAL_ZONE, UTC_ZONE);
      return convertDateTime(d, zoneArg(args[1], 'sourceTimeZone'), UTC_ZONE);
    },
    ConvertTimeBySystemTimeZoneId: (_rt, _s, args) => {
      if (args.length === 3) {
        return convertDateTime(
          dateArg(args[0]) as CsDateTime,
          findZone(str(args[1], 'sourceTimeZoneId')),
          findZone(str(args[2], 'destinationTimeZoneId')),
        );
      }
      return convertTo(args[0], findZone(str(args[1], 'destinationTimeZoneId')));
    },
  },
});
