/**
 * System.Tuple: `Tuple.Create(a, b)` and `new Tuple<T1, T2>(a, b)`, read through Item1 … Item7, equal by value,
 * printed "(a, b)". https://learn.microsoft.com/dotnet/api/system.tuple
 */
import { equals, toDotNetStringRt } from '../runtime/convert.js';
import { argError, CsException, defineType, type Property } from '../runtime/core.js';
import { hashString } from './helpers.js';

export class CsTuple {
  constructor(readonly items: readonly unknown[]) {}
}

const MAX_ITEMS = 7;

function create(args: readonly unknown[]): CsTuple {
  if (args.length < 1 || args.length > MAX_ITEMS) {
    throw argError(`a Tuple has 1 to ${MAX_ITEMS} items, got ${args.length}`);
  }
  return new CsTuple([...args]);
}

const itemProps: Record<string, Property> = {};
for (let i = 1; i <= MAX_ITEMS; i++) {
  itemProps[`Item${i}`] = {
    get: (_rt, self: CsTuple) => {
      if (i > self.items.length) {
        throw new CsException(
          'InvalidOperationException',
          `this Tuple has ${self.items.length} items, not ${i}`,
        );
      }
      return self.items[i - 1];
    },
  };
}

const generic = Array.from({ length: MAX_ITEMS }, (_, i) => `Tuple\`${i + 1}`);

export const TupleType = defineType({
  name: 'Tuple',
  namespace: 'System',
  aliases: [...generic, ...generic.map((n) => `System.${n}`)],
  classes: [CsTuple],
  construct: (_rt, args) => create(args),
  props: itemProps,
  methods: {
    Equals: (_rt, self: CsTuple, args) => {
      const other = args[0];
      return (
        other instanceof CsTuple &&
        other.items.length === self.items.length &&
        self.items.every((x, i) => equals(x, other.items[i]))
      );
    },
    GetHashCode: (rt, self: CsTuple) =>
      hashString(self.items.map((x) => toDotNetStringRt(rt, x)).join('\u0000')),
    ToString: (rt, self: CsTuple) => `(${self.items.map((x) => toDotNetStringRt(rt, x)).join(', ')})`,
  },
  staticMethods: { Create: (_rt, _s, args) => create(args) },
});
