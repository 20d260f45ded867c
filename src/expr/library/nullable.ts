/**
 * System.Nullable, the static class: Compare and Equals of two nullable values, null ordered before every value
 * (Nullable.Compare<T>, Nullable.Equals<T>). `int?` itself, with HasValue and Value, is the value or null
 * (primitives.ts). GetUnderlyingType is left out: it takes a System.Type, and `typeof` is refused. https://learn.microsoft.com/dotnet/api/system.nullable
 */
import { compare, equals } from '../runtime/convert.js';
import { defineType } from '../runtime/core.js';

const isNull = (v: unknown): boolean => v === null || v === undefined;

export const NullableType = defineType({
  name: 'Nullable',
  namespace: 'System',
  staticMethods: {
    Compare: (_rt, _s, [a, b]) => {
      if (isNull(a)) return isNull(b) ? 0 : -1;
      if (isNull(b)) return 1;
      return Math.sign(compare(a, b));
    },
    Equals: (_rt, _s, [a, b]) => (isNull(a) || isNull(b) ? isNull(a) && isNull(b) : equals(a, b)),
  },
});
