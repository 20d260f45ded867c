/**
 * System.TimeZone, obsolete in .NET since TimeZoneInfo: only CurrentTimeZone, the gateway's local zone, which is UTC
 * (no daylight time, offset zero). GetDaylightChanges is left out: it returns System.Globalization.DaylightTime,
 * which is not among the allowed types. https://learn.microsoft.com/dotnet/api/system.timezone
 */
import { argError, defineType, prop } from '../runtime/core.js';
import { CsDateTime, CsTimeSpan } from '../runtime/values.js';

export class CsTimeZone {}

const CURRENT = new CsTimeZone();
const UTC_NAME = 'Coordinated Universal Time';

function dateArg(v: unknown): CsDateTime {
  if (v instanceof CsDateTime) return v;
  throw argError("Value cannot be null. (Parameter 'time')", 'ArgumentNullException');
}

export const TimeZoneType = defineType({
  name: 'TimeZone',
  namespace: 'System',
  classes: [CsTimeZone],
  props: {
    StandardName: prop(() => UTC_NAME),
    DaylightName: prop(() => UTC_NAME),
  },
  methods: {
    GetUtcOffset: (_rt, _z, args) => {
      dateArg(args[0]);
      return new CsTimeSpan(0n);
    },
    IsDaylightSavingTime: (_rt, _z, args) => {
      dateArg(args[0]);
      return false;
    },
    // Local time and UTC are the same instant here: only the Kind changes.
    ToLocalTime: (_rt, _z, args) => {
      const d = dateArg(args[0]);
      return d.kind === 'Local' ? d : new CsDateTime(d.ticks, 'Local');
    },
    ToUniversalTime: (_rt, _z, args) => {
      const d = dateArg(args[0]);
      return d.kind === 'Utc' ? d : new CsDateTime(d.ticks, 'Utc');
    },
  },
  staticProps: { CurrentTimeZone: prop(() => CURRENT) },
});
