/**
 * System.Linq.Enumerable as extension methods on every IEnumerable. Evaluated eagerly into arrays (each element
 * costs a step), which matches .NET's results for side-effect-free lambdas — the only kind policies write.
 */

import { isInstance } from '../compile/support.js';
import { add, equals, toBoolean } from '../runtime/convert.js';
import {
  argError,
  CsException,
  checkSize,
  defineExtensions,
  defineType,
  enumerate,
  type Method,
  prop,
  type Rt,
  step,
  typeOf,
} from '../runtime/core.js';
import { CsDecimal, DECIMAL_ZERO, decDivide, stripTrailingZeros } from '../runtime/decimal.js';
import { CsChar, CsDouble, CsGuid } from '../runtime/values.js';
import { CsDictionary, CsHashSet, CsList, defaultCompare } from './collections.js';
import { int } from './helpers.js';
import { CsComparer } from './string.js';

type Fn = (...a: unknown[]) => unknown;

/** The sequence as an array; a lazy source (a string's characters) costs its steps as it is read, not after. */
function items(rt: Rt, v: unknown): unknown[] {
  if (Array.isArray(v)) {
    step(rt, v.length);
    return v;
  }
  const list: unknown[] = [];
  for (const x of enumerate(v)) {
    step(rt);
    list.push(x);
  }
  return list;
}

function fn(v: unknown): Fn {
  if (typeof v !== 'function') throw argError('expected a lambda expression');
  return v as Fn;
}

const pred = (v: unknown): ((x: unknown, i: number) => boolean) => {
  const f = fn(v);
  return (x, i) => toBoolean(f(x, i));
};

const noElements = (): CsException =>
  new CsException('InvalidOperationException', 'Sequence contains no elements');
const noMatch = (): CsException =>
  new CsException('InvalidOperationException', 'Sequence contains no matching element');

/** An ordered sequence remembers its keys so ThenBy can refine it. */
export class CsOrdered {
  constructor(
    readonly source: unknown[],
    readonly keys: { key: Fn; desc: boolean; comparer: CsComparer | null }[],
  ) {}
  sorted(): unknown[] {
    const withKeys = this.source.map((v, i) => ({ v, i, k: this.keys.map((k) => k.key(v)) }));
    withKeys.sort((x, y) => {
      for (let j = 0; j < this.keys.length; j++) {
        const c = defaultCompare(x.k[j], y.k[j], this.keys[j]!.comparer);
        if (c !== 0) return this.keys[j]!.desc ? -c : c;
      }
      return x.i - y.i;
    });
    return withKeys.map((w) => w.v);
  }
}

export class CsGrouping {
  constructor(
    readonly key: unknown,
    readonly items: unknown[],
  ) {}
}

/** A hashable form of a value for Distinct/GroupBy/Union: value semantics for the value types. */
function hashKey(v: unknown, comparer: CsComparer | null = null): unknown {
  if (comparer) v = comparer.key(v);
  if (v instanceof CsChar) return `\u0000c${v.code}`;
  if (v instanceof CsGuid) return `\u0000g${v.value}`;
  if (v instanceof CsDouble) return `\u0000d${v.v}`;
  if (v instanceof CsDecimal) return `\u0000m${stripTrailingZeros(v).toString()}`;
  return v;
}

function comparerIn(args: unknown[]): CsComparer | null {
  return (args.find((a) => a instanceof CsComparer) as CsComparer | undefined) ?? null;
}

function sum(rt: Rt, values: unknown[]): unknown {
  let total: unknown = 0;
  for (const v of values) {
    if (v === null || v === undefined) continue;
    if (typeof total === 'number' && typeof v === 'number') {
      const r = total + v;
      if (r > 2147483647 || r < -2147483648)
        throw new CsException('OverflowException', 'Arithmetic operation resulted in an overflow.');
      total = r;
    } else {
      total = add(rt, total, v);
    }
  }
  return total;
}

/** default(T) of a sequence's element type, guessed from its elements (the static type is not tracked). */
function defaultElement(source: unknown[]): unknown {
  const x = source[0];
  if (typeof x === 'number') return 0;
  if (typeof x === 'bigint') return 0n;
  if (typeof x === 'boolean') return false;
  if (x instanceof CsDouble) return new CsDouble(0);
  if (x instanceof CsDecimal) return DECIMAL_ZERO;
  return null;
}

const first =
  (orDefault: boolean, last: boolean): Method =>
  (rt, self, args) => {
    const source = items(rt, self);
    let list = source;
    if (args[0] !== undefined && typeof args[0] === 'function') {
      const p = pred(args[0]);
      list = list.filter((x, i) => p(x, i));
      if (list.length === 0) {
        if (orDefault) return args[1] ?? defaultElement(source);
        throw noMatch();
      }
    }
    if (list.length === 0) {
      if (orDefault) return args[0] !== undefined && typeof args[0] !== 'function' ? args[0] : null;
      throw noElements();
    }
    return last ? list[list.length - 1] : list[0];
  };

const single =
  (orDefault: boolean): Method =>
  (rt, self, args) => {
    let list = items(rt, self);
    if (typeof args[0] === 'function') {
      const p = pred(args[0]);
      list = list.filter((x, i) => p(x, i));
    }
    if (list.length > 1)
      throw new CsException('InvalidOperationException', 'Sequence contains more than one element');
    if (list.length === 0) {
      if (orDefault) return null;
      throw noElements();
    }
    return list[0];
  };

const minMax =
  (sign: 1 | -1): Method =>
  (rt, self, args) => {
    let list = items(rt, self);
    if (args[0] !== undefined) {
      const f = fn(args[0]);
      list = list.map((x) => f(x));
    }
    list = list.filter((x) => x !== null && x !== undefined);
    if (list.length === 0) throw noElements();
    return list.reduce((best, x) => (defaultCompare(x, best) * sign > 0 ? x : best));
  };

const order =
  (desc: boolean): Method =>
  (rt, self, args) =>
    new CsOrdered(items(rt, self), [{ key: fn(args[0]), desc, comparer: comparerIn(args) }]);

const thenBy =
  (desc: boolean): Method =>
  (_rt, self: CsOrdered, args) => {
    if (!(self instanceof CsOrdered)) throw argError('ThenBy needs an ordered sequence (OrderBy first)');
    return new CsOrdered(self.source, [...self.keys, { key: fn(args[0]), desc, comparer: comparerIn(args) }]);
  };

function distinct(list: unknown[], comparer: CsComparer | null): unknown[] {
  const seen = new Set<unknown>();
  const out: unknown[] = [];
  for (const x of list) {
    const k = hashKey(x, comparer);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(x);
    }
  }
  return out;
}

const methods: Record<string, Method> = {
  Where: (rt, self, args) => {
    const p = pred(args[0]);
    return items(rt, self).filter((x, i) => p(x, i));
  },
  Select: (rt, self, args) => {
    const f = fn(args[0]);
    return items(rt, self).map((x, i) => f(x, i));
  },
  SelectMany: (rt, self, args) => {
    const f = fn(args[0]);
    const out: unknown[] = [];
    for (const x of items(rt, self)) {
      const inner = items(rt, f(x));
      checkSize(rt, out.length + inner.length);
      out.push(...inner);
    }
    return out;
  },
  Any: (rt, self, args) => {
    const list = items(rt, self);
    if (args[0] === undefined) return list.length > 0;
    const p = pred(args[0]);
    return list.some((x, i) => p(x, i));
  },
  All: (rt, self, args) => {
    const p = pred(args[0]);
    return items(rt, self).every((x, i) => p(x, i));
  },
  Count: (rt, self, args) => {
    const list = items(rt, self);
    if (args[0] === undefined) return list.length;
    const p = pred(args[0]);
    return list.filter((x, i) => p(x, i)).length;
  },
  LongCount: (rt, self, args) => BigInt(methods.Count!(rt, self, args, []) as number),
  First: first(false, false),
  FirstOrDefault: first(true, false),
  Last: first(false, true),
  LastOrDefault: first(true, true),
  Single: single(false),
  SingleOrDefault: single(true),
  ElementAt: (rt, self, args) => {
    const list = items(rt, self);
    const i = int(args[0]);
    if (i < 0 || i >= list.length) {
      throw new CsException('ArgumentOutOfRangeException', "Index was out of range. (Parameter 'index')");
    }
    return list[i];
  },
  ElementAtOrDefault: (rt, self, args) => items(rt, self)[int(args[0])] ?? null,
  DefaultIfEmpty: (rt, self, args) => {
    const list = items(rt, self);
    return list.length ? list : [args[0] ?? null];
  },
  Contains: (rt, self, args) => {
    const c = comparerIn(args);
    const k = hashKey(args[0], c);
    return items(rt, self).some((x) => (c ? hashKey(x, c) === k : equals(x, args[0])));
  },
  Sum: (rt, self, args) => {
    const list = items(rt, self);
    return sum(rt, args[0] === undefined ? list : list.map((x) => fn(args[0])(x)));
  },
  Average: (rt, self, args) => {
    let list = items(rt, self);
    if (args[0] !== undefined) list = list.map((x) => fn(args[0])(x));
    list = list.filter((x) => x !== null);
    if (list.length === 0) throw noElements();
    const total = sum(rt, list);
    if (total instanceof CsDecimal) return decDivide(total, CsDecimal.fromInteger(list.length));
    const n =
      typeof total === 'bigint' ? Number(total) : total instanceof CsDouble ? total.v : (total as number);
    return new CsDouble(n / list.length);
  },
  Min: minMax(-1),
  Max: minMax(1),
  OrderBy: order(false),
  OrderByDescending: order(true),
  ThenBy: thenBy(false),
  ThenByDescending: thenBy(true),
  Reverse: (rt, self) => [...items(rt, self)].reverse(),
  Skip: (rt, self, args) => items(rt, self).slice(Math.max(0, int(args[0]))),
  Take: (rt, self, args) => items(rt, self).slice(0, Math.max(0, int(args[0]))),
  SkipWhile: (rt, self, args) => {
    const p = pred(args[0]);
    const list = items(rt, self);
    let i = 0;
    while (i < list.length && p(list[i], i)) i++;
    return list.slice(i);
  },
  TakeWhile: (rt, self, args) => {
    const p = pred(args[0]);
    const list = items(rt, self);
    let i = 0;
    while (i < list.length && p(list[i], i)) i++;
    return list.slice(0, i);
  },
  Concat: (rt, self, args) => {
    const out = [...items(rt, self), ...items(rt, args[0])];
    checkSize(rt, out.length);
    return out;
  },
  Append: (rt, self, args) => [...items(rt, self), args[0]],
  Prepend: (rt, self, args) => [args[0], ...items(rt, self)],
  Distinct: (rt, self, args) => distinct(items(rt, self), comparerIn(args)),
  Union: (rt, self, args) => distinct([...items(rt, self), ...items(rt, args[0])], comparerIn(args)),
  Intersect: (rt, self, args) => {
    const c = comparerIn(args);
    const other = new Set(items(rt, args[0]).map((x) => hashKey(x, c)));
    return distinct(items(rt, self), c).filter((x) => other.has(hashKey(x, c)));
  },
  Except: (rt, self, args) => {
    const c = comparerIn(args);
    const other = new Set(items(rt, args[0]).map((x) => hashKey(x, c)));
    return distinct(items(rt, self), c).filter((x) => !other.has(hashKey(x, c)));
  },
  SequenceEqual: (rt, self, args) => {
    const a = items(rt, self);
    const b = items(rt, args[0]);
    return a.length === b.length && a.every((x, i) => equals(x, b[i]));
  },
  Zip: (rt, self, args) => {
    const a = items(rt, self);
    const b = items(rt, args[0]);
    const f = fn(args[1]);
    return a.slice(0, Math.min(a.length, b.length)).map((x, i) => f(x, b[i]));
  },
  Aggregate: (rt, self, args) => {
    const list = items(rt, self);
    if (args.length === 1) {
      if (list.length === 0) throw noElements();
      const f = fn(args[0]);
      return list.slice(1).reduce((acc, x) => f(acc, x), list[0]);
    }
    const f = fn(args[1]);
    const acc = list.reduce((a, x) => f(a, x), args[0]);
    return args[2] !== undefined ? fn(args[2])(acc) : acc;
  },
  GroupBy: (rt, self, args) => {
    const key = fn(args[0]);
    const elem = typeof args[1] === 'function' ? fn(args[1]) : null;
    const groups = new Map<unknown, CsGrouping>();
    for (const x of items(rt, self)) {
      const k = key(x);
      const h = hashKey(k, comparerIn(args));
      let g = groups.get(h);
      if (!g) {
        g = new CsGrouping(k, []);
        groups.set(h, g);
      }
      g.items.push(elem ? elem(x) : x);
    }
    return [...groups.values()];
  },
  ToList: (rt, self) => new CsList([...items(rt, self)]),
  ToArray: (rt, self) => [...items(rt, self)],
  ToHashSet: (rt, self, args) => {
    const s = new CsHashSet(comparerIn(args));
    for (const x of items(rt, self)) s.add(rt, x);
    return s;
  },
  ToDictionary: (rt, self, args) => {
    const key = fn(args[0]);
    const val = typeof args[1] === 'function' ? fn(args[1]) : null;
    const d = new CsDictionary(comparerIn(args));
    for (const x of items(rt, self)) {
      const k = key(x);
      if (d.has(k)) throw argError('An item with the same key has already been added.');
      d.set(rt, k, val ? val(x) : x);
    }
    return d;
  },
  Cast: (rt, self, _args, typeArgs) => {
    const t = typeArgs[0];
    return items(rt, self).map((x) => {
      if (t && x !== null && !isInstance(t, x)) {
        throw new CsException(
          'InvalidCastException',
          `Unable to cast object of type '${typeOf(x).fullName}' to type '${t.info.fullName}'`,
        );
      }
      return x;
    });
  },
  OfType: (rt, self, _args, typeArgs) => {
    const t = typeArgs[0];
    return items(rt, self).filter((x) => (t ? isInstance(t, x) : x !== null));
  },
};

defineExtensions({ declaredBy: 'System.Linq.Enumerable', receiver: 'IEnumerable', methods });

export const OrderedType = defineType({
  name: 'IOrderedEnumerable`1',
  namespace: 'System.Linq',
  classes: [CsOrdered],
  enumerate: (self: CsOrdered) => self.sorted(),
});

export const GroupingType = defineType({
  name: 'IGrouping`2',
  namespace: 'System.Linq',
  classes: [CsGrouping],
  props: { Key: prop((self: CsGrouping) => self.key) },
  enumerate: (self: CsGrouping) => self.items,
});

/** IEnumerable<T> etc. as types for casts, `is` and declarations: anything that can be enumerated. */
defineType({
  name: 'IEnumerable`1',
  namespace: 'System.Collections.Generic',
  aliases: [
    'IEnumerable',
    'ICollection`1',
    'IList`1',
    'IReadOnlyList`1',
    'IReadOnlyCollection`1',
    'ICollection',
    'IList',
  ],
  test: (v) => v !== null && v !== undefined && typeof v !== 'string' && typeOf(v).enumerate !== undefined,
});

export const EnumerableType = defineType({
  name: 'Enumerable',
  namespace: 'System.Linq',
  staticMethods: {
    Range: (rt, _s, args) => {
      const start = int(args[0]);
      const count = int(args[1]);
      if (count < 0)
        throw new CsException(
          'ArgumentOutOfRangeException',
          "Specified argument was out of the range of valid values. (Parameter 'count')",
        );
      checkSize(rt, count);
      return Array.from({ length: count }, (_, i) => start + i);
    },
    Repeat: (rt, _s, args) => {
      const count = int(args[1]);
      checkSize(rt, count);
      return new Array(Math.max(0, count)).fill(args[0]);
    },
    Empty: () => [],
    // Static call form: Enumerable.Where(list, x => …)
    ...Object.fromEntries(
      Object.entries(methods).map(([k, m]) => [
        k,
        ((rt, _s, args, typeArgs) => m(rt, args[0], args.slice(1), typeArgs)) as Method,
      ]),
    ),
  },
});
