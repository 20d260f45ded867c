/**
 * The time-zone database behind TimeZoneInfo (time-zone-info.ts): ICU's, through Intl. A zone's offset at an instant,
 * the offsets a wall-clock time can have, its names, and the lookup of an id, IANA or Windows (CLDR's windowsZones,
 * from the package windows-iana). Formatters and zones are cached: the runtime's zones are a finite list.
 */
import { findIana } from 'windows-iana';
import { CsException, checkSize, type Rt, step } from '../runtime/core.js';
import { TICKS_PER_MS, TICKS_PER_SECOND, UNIX_EPOCH_TICKS } from '../runtime/values.js';

export const TICKS_PER_MINUTE = 60n * TICKS_PER_SECOND;
const HOUR_MS = 3_600_000;

export interface ZoneNames {
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
export function offsetAt(zone: CsTimeZoneInfo, epochMs: number): number {
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

export const ticksToMs = (ticks: bigint): number => Number((ticks - UNIX_EPOCH_TICKS) / TICKS_PER_MS);
export const minutesToTicks = (minutes: number): bigint => BigInt(minutes) * TICKS_PER_MINUTE;

/** The standard offset of a year: the smaller of the offsets in January and July (daylight time adds to it). */
export function standardOffset(zone: CsTimeZoneInfo, year: number): number {
  if (zone.iana === null) return zone.fixedOffsetMinutes;
  return Math.min(offsetAt(zone, Date.UTC(year, 0, 1, 12)), offsetAt(zone, Date.UTC(year, 6, 1, 12)));
}

export const yearOf = (epochMs: number): number => new Date(epochMs).getUTCFullYear();

export function baseUtcOffset(zone: CsTimeZoneInfo): number {
  return standardOffset(zone, new Date().getUTCFullYear());
}

export function supportsDaylight(zone: CsTimeZoneInfo): boolean {
  if (zone.iana === null) return false;
  const year = new Date().getUTCFullYear();
  return offsetAt(zone, Date.UTC(year, 0, 1, 12)) !== offsetAt(zone, Date.UTC(year, 6, 1, 12));
}

/**
 * The UTC instants a wall-clock time of the zone can mean: none (skipped by a clock change), one, or two (repeated),
 * as [offset] pairs, the standard one first.
 */
export function offsetsForWallTime(zone: CsTimeZoneInfo, wallMs: number): number[] {
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

export const offsetText = (minutes: number): string => {
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

export function zoneNames(iana: string): ZoneNames {
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

let systemZoneList: readonly CsTimeZoneInfo[] | null = null;

/**
 * Every zone of the runtime's database by its IANA id, ordered by offset as .NET orders them, then by id (.NET's
 * second key is the display name, which would cost ICU's names of every zone).
 */
export function systemZones(rt: Rt): CsTimeZoneInfo[] {
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
