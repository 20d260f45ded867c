/** Enum types: each is a type whose static members are its values; instances share the Enum member table. */
import { argError, defineType, type Property, type TypeInfo } from '../runtime/core.js';
import { CsEnum, type EnumDef, makeEnum } from '../runtime/enum.js';

export function defineEnumType(def: EnumDef, namespace: string, aliases: string[] = []): TypeInfo {
  const staticProps: Record<string, Property> = {};
  for (const [name, value] of def.values) staticProps[name] = { get: () => value, constant: value };
  return defineType({
    name: def.name,
    namespace,
    aliases,
    test: (v) => v instanceof CsEnum && v.enumName === def.name,
    defaultValue: def.values.values().next().value ?? null,
    convert: (v) => {
      if (v instanceof CsEnum && v.enumName === def.name) return v;
      if (typeof v === 'number') return new CsEnum(def.name, v, def.names);
      throw argError(`cannot convert to ${def.name}`);
    },
    staticProps,
  });
}

export const MidpointRounding = makeEnum('MidpointRounding', {
  ToEven: 0,
  AwayFromZero: 1,
  ToZero: 2,
  ToNegativeInfinity: 3,
  ToPositiveInfinity: 4,
});
defineEnumType(MidpointRounding, 'System');

export const DateTimeKindEnum = makeEnum('DateTimeKind', { Unspecified: 0, Utc: 1, Local: 2 });
defineEnumType(DateTimeKindEnum, 'System');

export const DayOfWeekEnum = makeEnum('DayOfWeek', {
  Sunday: 0,
  Monday: 1,
  Tuesday: 2,
  Wednesday: 3,
  Thursday: 4,
  Friday: 5,
  Saturday: 6,
});
defineEnumType(DayOfWeekEnum, 'System');

export const UriKindEnum = makeEnum('UriKind', { RelativeOrAbsolute: 0, Absolute: 1, Relative: 2 });
defineEnumType(UriKindEnum, 'System');

export const UriPartialEnum = makeEnum('UriPartial', { Scheme: 0, Authority: 1, Path: 2, Query: 3 });
defineEnumType(UriPartialEnum, 'System');

export function enumOf(def: EnumDef, name: string): CsEnum {
  return def.values.get(name)!;
}
