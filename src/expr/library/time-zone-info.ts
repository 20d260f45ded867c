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
import { findIana } from 'windows-iana';
import { argError, CsException, checkSize, defineType, prop, type Rt, step } from '../runtime/core.js';
import {
  CsDateTime,
  CsDateTimeOffset,
  CsTimeSpan,
  TICKS_PER_MS,
  TICKS_PER_SECOND,
  UNIX_EPOCH_TICKS,
} from '../runtime/values.js';
import { str } from './helpers.js';

const TICKS_PER_MINUTE = 60n * TICKS_PER_SECOND;
const HOUR_MS = 3_600_000;

interface ZoneNames {
  readonly display: string;
  readonly standard: string;
  readonly daylight: string;
}

export class CsTimeZoneInfo {
  #names: ZoneNames | null;
  constructor(
    readonly id: string,
    /** The IANA zone Intl computes with; null for a fixed offset (UTC, CreateCustomTimeZone). */
    readonly iana: string | null,
    readonly fixedOffsetMinutes: number,
    names: ZoneNames | null,
  ) {
    this.#names = names;
  }
  /** Built when first read: ICU's names cost a millisecond or so a zone, and most conversions never read them. */
  get names(): ZoneNames {
    this.#names ??=
      this.iana === null
        ? {
            display: `(UTC${offsetText(this.fixedOffsetMinutes)}) ${this.id}`,
            standard: this.id,
            daylight: this.id,
          }
        : zoneNames(this.iana);
    return this.#names;
  }
}

const UTC_NAME = 'Coordinated Universal Time';
const utcNames = { display: `(UTC) ${UTC_NAME}`, standard: UTC_NAME, daylight: UTC_NAME };
/** TimeZoneInfo.Utc and TimeZoneInfo.Local: two objects, as in .NET, so ConvertTime can tell Utc from Local. */
export const UTC_ZONE = new CsTimeZoneInfo('UTC', null, 0, utcNames);
export const LOCAL_ZONE = new CsTimeZoneInfo('UTC', null, 0, utcNames);

// One formatter per IANA zone: the zones are the runtime's finite list, so the cache is bounded.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(iana: string): Intl.DateTimeFormat {
  let f = formatters.get(iana);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: iana,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(iana, f);
  }
  return f;
}

/** The zone's offset from UTC in whole minutes at an instant (milliseconds since the epoch). */
function offsetAt(zone: CsTimeZoneInfo, epochMs: number): number {
  if (zone.iana === null) return zone.fixedOffsetMinutes;
  const whole = Math.floor(epochMs / 1000) * 1000;
  const parts: Record<string, string> = {};
  for (const p of formatter(zone.iana).formatToParts(new Date(whole))) parts[p.type] = p.value;
  const wall = new Date(0);
  const year = Number(parts.year) * (parts.era === 'BC' ? -1 : 1);
  wall.setUTCFullYear(parts.era === 'BC' ? year + 1 : year, Number(parts.month) - 1, Number(parts.day));
  wall.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0);
  return Math.round((wall.getTime() - whole) / 60_000);
}

const ticksToMs = (ticks: bigint): number => Number((ticks - UNIX_EPOCH_TICKS) / TICKS_PER_MS);
const minutesToTicks = (minutes: number): bigint => BigInt(minutes) * TICKS_PER_MINUTE;

/** The standard offset of a year: the smaller of the offsets in January and July (daylight time adds to it). */
function standardOffset(zone: CsTimeZoneInfo, year: number): number {
  if (zone.iana === null) return zone.fixedOffsetMinutes;
  return Math.min(offsetAt(zone, Date.UTC(year, 0, 1, 12)), offsetAt(zone, Date.UTC(year, 6, 1, 12)));
}

const yearOf = (epochMs: number): number => new Date(epochMs).getUTCFullYear();

function baseUtcOffset(zone: CsTimeZoneInfo): number {
  return standardOffset(zone, new Date().getUTCFullYear());
}

function supportsDaylight(zone: CsTimeZoneInfo): boolean {
  if (zone.iana === null) return false;
  const year = new Date().getUTCFullYear();
  return offsetAt(zone, Date.UTC(year, 0, 1, 12)) !== offsetAt(zone, Date.UTC(year, 6, 1, 12));
}

/**
 * The UTC instants a wall-clock time of the zone can mean: none (skipped by a clock change), one, or two (repeated),
 * as [offset] pairs, the standard one first.
 */
function offsetsForWallTime(zone: CsTimeZoneInfo, wallMs: number): number[] {
  if (zone.iana === null) return [zone.fixedOffsetMinutes];
  // Every offset in force within a day around the wall time is a candidate; the ones that map back to it are its.
  const candidates = new Set([
    offsetAt(zone, wallMs - 14 * HOUR_MS),
    offsetAt(zone, wallMs),
    offsetAt(zone, wallMs + 14 * HOUR_MS),
  ]);
  const valid = [...candidates].filter((o) => offsetAt(zone, wallMs - o * 60_000) === o);
  return valid.sort((a, b) => a - b);
}

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

const notFound = (id: string): CsException =>
  new CsException(
    'TimeZoneNotFoundException',
    `The time zone ID '${id}' was not found on the local computer.`,
  );

function ianaZone(id: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: id }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

function zoneName(iana: string, epochMs: number, style: 'long' | 'longGeneric'): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone: iana, timeZoneName: style })
    .formatToParts(new Date(epochMs))
    .find((p) => p.type === 'timeZoneName');
  return part?.value ?? iana;
}

const offsetText = (minutes: number): string => {
  const a = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
};

/**
 * Zones by the id asked for. Intl takes ids in any letter case, so the ids are not a finite set: the cache stops
 * growing at MAX_CACHED_ZONES and later ids are built each time (a zone costs a few milliseconds of ICU to build).
 */
const zoneCache = new Map<string, CsTimeZoneInfo>();
const MAX_CACHED_ZONES = 2048;

/** FindSystemTimeZoneById: "UTC" is TimeZoneInfo.Utc; an IANA id, or a Windows id through windowsZones. */
export function findZone(id: string): CsTimeZoneInfo {
  if (id.toUpperCase() === 'UTC') return UTC_ZONE;
  const cached = zoneCache.get(id);
  if (cached) return cached;
  if (id.length > 64 || id.trim() === '') throw notFound(id);
  const iana = ianaZone(id) ?? ianaZone(findIana(id, '001')[0] ?? findIana(id)[0] ?? '');
  if (iana === null) throw notFound(id);
  const zone = new CsTimeZoneInfo(id, iana, 0, null);
  if (zoneCache.size < MAX_CACHED_ZONES) zoneCache.set(id, zone);
  return zone;
}

function zoneNames(iana: string): ZoneNames {
  const zone = new CsTimeZoneInfo(iana, iana, 0, null);
  const year = new Date().getUTCFullYear();
  const jan = Date.UTC(year, 0, 1, 12);
  const jul = Date.UTC(year, 6, 1, 12);
  const [standardAt, daylightAt] = offsetAt(zone, jan) <= offsetAt(zone, jul) ? [jan, jul] : [jul, jan];
  const standard = zoneName(iana, standardAt, 'long');
  return {
    display: `(UTC${offsetText(baseUtcOffset(zone))}) ${zoneName(iana, standardAt, 'longGeneric')}`,
    standard,
    daylight: supportsDaylight(zone) ? zoneName(iana, daylightAt, 'long') : standard,
  };
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

let systemZoneList: readonly CsTimeZoneInfo[] | null = null;

/**
 * Every zone of the runtime's database by its IANA id, ordered by offset as .NET orders them, then by id (.NET's
 * second key is the display name, which would cost ICU's names of every zone).
 */
function systemZones(rt: Rt): CsTimeZoneInfo[] {
  systemZoneList ??= Intl.supportedValuesOf('timeZone')
    .map((id) => {
      // The runtime's own ids need no checking.
      const zone = zoneCache.get(id) ?? new CsTimeZoneInfo(id, id, 0, null);
      return { zone, offset: baseUtcOffset(zone) };
    })
    .sort((a, b) => a.offset - b.offset || (a.zone.id < b.zone.id ? -1 : 1))
    .map((z) => z.zone);
  step(rt, systemZoneList.length);
  checkSize(rt, systemZoneList.length);
  return [...systemZoneList];
}

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
