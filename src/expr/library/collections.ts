/** Arrays, List<T>, Dictionary<K,V>, HashSet<T>, KeyValuePair<K,V> and the read-only dictionaries of the context. */

import { isInstance } from '../compile/support.js';
import { HeaderCollection, QueryCollection, StringValuesMap, VariablesModel } from '../context.js';
import { compare, equals, toDotNetStringRt } from '../runtime/convert.js';
import {
  argError,
  CsException,
  type CsType,
  checkSize,
  defineType,
  enumerate,
  type Indexer,
  invalidCast,
  type Method,
  prop,
  type Rt,
  typeName,
} from '../runtime/core.js';
import { CsChar, CsGuid } from '../runtime/values.js';
import { int, setOut, str } from './helpers.js';
import { CsComparer, compareStrings, StringComparison } from './string.js';

export class CsKeyValue {
  constructor(
    readonly key: unknown,
    readonly value: unknown,
  ) {}
}

export class CsList {
  constructor(readonly items: unknown[] = []) {}
}

/** Dictionary keys: value semantics for strings, numbers, chars and Guids; optional case-insensitive comparer. */
function keyOf(v: unknown, comparer: CsComparer | null): unknown {
  if (v === null || v === undefined)
    throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'key')");
  if (comparer) v = comparer.key(v);
  if (v instanceof CsChar) return `\u0000char:${v.code}`;
  if (v instanceof CsGuid) return `\u0000guid:${v.value}`;
  return v;
}

export class CsDictionary {
  readonly map = new Map<unknown, { key: unknown; value: unknown }>();
  constructor(readonly comparer: CsComparer | null = null) {}
  has(k: unknown): boolean {
    return this.map.has(keyOf(k, this.comparer));
  }
  get(k: unknown): { key: unknown; value: unknown } | undefined {
    return this.map.get(keyOf(k, this.comparer));
  }
  set(rt: Rt, k: unknown, v: unknown): void {
    const key = keyOf(k, this.comparer);
    if (!this.map.has(key)) checkSize(rt, this.map.size + 1);
    this.map.set(key, { key: k, value: v });
  }
  delete(k: unknown): boolean {
    return this.map.delete(keyOf(k, this.comparer));
  }
}

export class CsHashSet {
  readonly map = new Map<unknown, unknown>();
  constructor(readonly comparer: CsComparer | null = null) {}
  add(rt: Rt, v: unknown): boolean {
    const k = v === null ? null : keyOf(v, this.comparer);
    if (this.map.has(k)) return false;
    checkSize(rt, this.map.size + 1);
    this.map.set(k, v);
    return true;
  }
  has(v: unknown): boolean {
    return this.map.has(v === null ? null : keyOf(v, this.comparer));
  }
}

const outOfRange = (): CsException =>
  new CsException(
    'ArgumentOutOfRangeException',
    "Index was out of range. Must be non-negative and less than the size of the collection. (Parameter 'index')",
  );

const keyNotFound = (k: unknown): CsException =>
  new CsException(
    'KeyNotFoundException',
    `The given key '${toDotNetStringRt(null, k)}' was not present in the dictionary.`,
  );

function arrayIndex(self: ArrayLike<unknown>, i: unknown): number {
  const n = int(i, 'index');
  if (n < 0 || n >= self.length)
    throw new CsException('IndexOutOfRangeException', 'Index was outside the bounds of the array.');
  return n;
}

const arrayIndexer: Indexer = {
  get: (_rt, self: unknown[] | Uint8Array, args) => self[arrayIndex(self, args[0])] ?? null,
  set: (_rt, self: unknown[] | Uint8Array, args, v) => {
    const i = arrayIndex(self, args[0]);
    if (self instanceof Uint8Array) self[i] = Number(v) & 255;
    else self[i] = v;
  },
};

export const ArrayType = defineType({
  name: 'Array',
  namespace: 'System',
  classes: [Array, Uint8Array, Buffer],
  test: (v) => Array.isArray(v) || v instanceof Uint8Array,
  props: {
    Length: prop((self: unknown[]) => self.length),
    LongLength: prop((self: unknown[]) => BigInt(self.length)),
  },
  indexer: arrayIndexer,
  methods: {
    ToString: (_rt, self) => (self instanceof Uint8Array ? 'System.Byte[]' : 'System.Object[]'),
    Clone: (_rt, self: unknown[]) => (self instanceof Uint8Array ? Buffer.from(self) : [...self]),
    GetLength: (_rt, self: unknown[]) => self.length,
    CopyTo: (_rt, self: unknown[], args) => {
      const dest = args[0] as unknown[];
      const at = int(args[1]);
      for (let i = 0; i < self.length; i++) dest[at + i] = self[i];
      return null;
    },
  },
  staticMethods: {
    IndexOf: (_rt, _s, args) => [...(args[0] as unknown[])].findIndex((x) => equals(x, args[1])),
    Reverse: (_rt, _s, args) => {
      (args[0] as unknown[]).reverse();
      return null;
    },
    Empty: () => [],
    Copy: (_rt, _s, args) => {
      // Array.Copy(src, dest, length) and Array.Copy(src, srcIndex, dest, destIndex, length)
      const [src, a, b, c, d] = args as [ArrayLike<unknown>, unknown, unknown, unknown, unknown];
      const [from, dest, to, n] =
        args.length === 3 ? [0, a as unknown[], 0, int(b)] : [int(a), b as unknown[], int(c), int(d)];
      if (from + n > src.length || to + n > dest.length) {
        throw new CsException('ArgumentException', 'Destination array was not long enough.');
      }
      for (let i = 0; i < n; i++) dest[to + i] = src[from + i];
      return null;
    },
    Exists: (_rt, _s, args) =>
      (args[0] as unknown[]).some((x) => (args[1] as (x: unknown) => unknown)(x) === true),
    Sort: (_rt, _s, args) => {
      sortInPlace(args[0] as unknown[]);
      return null;
    },
  },
  enumerate: (self: Iterable<unknown>) => self,
});
// Buffers enumerate as numbers already (byte values).

/** Comparer<T>.Default, used by Sort and OrderBy: culture-sensitive for strings, numeric otherwise; null sorts first. */
export function defaultCompare(a: unknown, b: unknown, comparer?: CsComparer | null): number {
  const own = comparer?.order(a, b);
  if (own !== undefined && own !== null) return own;
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'string' && typeof b === 'string')
    return compareStrings(a, b, comparer ? comparer.comparison : StringComparison.members.CurrentCulture);
  return compare(a, b);
}

function sortInPlace(a: unknown[]): void {
  stableSort(a, defaultCompare);
}

const listIndexer: Indexer = {
  get: (_rt, self: CsList, args) => {
    const i = int(args[0]);
    if (i < 0 || i >= self.items.length) throw outOfRange();
    return self.items[i];
  },
  set: (_rt, self: CsList, args, v) => {
    const i = int(args[0]);
    if (i < 0 || i >= self.items.length) throw outOfRange();
    self.items[i] = v;
  },
};

function add(rt: Rt, list: CsList, v: unknown): void {
  checkSize(rt, list.items.length + 1);
  list.items.push(v);
}

const pred = (f: unknown): ((x: unknown) => boolean) => {
  if (typeof f !== 'function') throw argError('expected a lambda');
  return (x) => f(x) === true;
};

export const ListType = defineType({
  name: 'List`1',
  namespace: 'System.Collections.Generic',
  aliases: ['List'],
  classes: [CsList],
  construct: (rt, args) => {
    const list = new CsList();
    if (args.length === 1 && args[0] !== null && typeof args[0] === 'object') {
      for (const x of enumerate(args[0])) add(rt, list, x);
    }
    return list;
  },
  addItem: (rt, self: CsList, args) => add(rt, self, args[0]),
  props: {
    Count: prop((self: CsList) => self.items.length),
    Capacity: prop((self: CsList) => self.items.length),
  },
  indexer: listIndexer,
  methods: {
    Add: (rt, self: CsList, args) => {
      add(rt, self, args[0]);
      return null;
    },
    AddRange: (rt, self: CsList, args) => {
      // A copy only when adding the list to itself; otherwise each element is checked against the limit as it comes.
      for (const x of args[0] === self ? [...self.items] : enumerate(args[0])) add(rt, self, x);
      return null;
    },
    Insert: (rt, self: CsList, args) => {
      const i = int(args[0]);
      if (i < 0 || i > self.items.length) throw outOfRange();
      checkSize(rt, self.items.length + 1);
      self.items.splice(i, 0, args[1]);
      return null;
    },
    Remove: (_rt, self: CsList, args) => {
      const i = self.items.findIndex((x) => equals(x, args[0]));
      if (i < 0) return false;
      self.items.splice(i, 1);
      return true;
    },
    RemoveAt: (_rt, self: CsList, args) => {
      const i = int(args[0]);
      if (i < 0 || i >= self.items.length) throw outOfRange();
      self.items.splice(i, 1);
      return null;
    },
    RemoveAll: (_rt, self: CsList, args) => {
      const p = pred(args[0]);
      const before = self.items.length;
      const kept = self.items.filter((x) => !p(x));
      self.items.length = 0;
      self.items.push(...kept);
      return before - kept.length;
    },
    Clear: (_rt, self: CsList) => {
      self.items.length = 0;
      return null;
    },
    Contains: (_rt, self: CsList, args) => self.items.some((x) => equals(x, args[0])),
    IndexOf: (_rt, self: CsList, args) => self.items.findIndex((x) => equals(x, args[0])),
    Find: (_rt, self: CsList, args) => self.items.find(pred(args[0])) ?? null,
    FindAll: (_rt, self: CsList, args) => new CsList(self.items.filter(pred(args[0]))),
    FindIndex: (_rt, self: CsList, args) => self.items.findIndex(pred(args[0])),
    Exists: (_rt, self: CsList, args) => self.items.some(pred(args[0])),
    TrueForAll: (_rt, self: CsList, args) => self.items.every(pred(args[0])),
    ForEach: (_rt, self: CsList, args) => {
      const f = args[0] as (x: unknown) => unknown;
      for (const x of [...self.items]) f(x);
      return null;
    },
    Sort: (_rt, self: CsList, args) => {
      if (typeof args[0] === 'function') {
        const f = args[0] as (a: unknown, b: unknown) => unknown;
        stableSort(self.items, (a, b) => Number(f(a, b)));
      } else sortInPlace(self.items);
      return null;
    },
    Reverse: (_rt, self: CsList) => {
      self.items.reverse();
      return null;
    },
    GetRange: (_rt, self: CsList, args) =>
      new CsList(self.items.slice(int(args[0]), int(args[0]) + int(args[1]))),
    ToString: () => 'System.Collections.Generic.List`1[System.Object]',
  },
  enumerate: (self: CsList) => self.items,
});

function stableSort(a: unknown[], cmp: (x: unknown, y: unknown) => number): void {
  const indexed = a.map((v, i) => ({ v, i }));
  indexed.sort((x, y) => cmp(x.v, y.v) || x.i - y.i);
  for (let i = 0; i < a.length; i++) a[i] = indexed[i]!.v;
}

export const KeyValuePairType = defineType({
  name: 'KeyValuePair`2',
  namespace: 'System.Collections.Generic',
  aliases: ['KeyValuePair'],
  classes: [CsKeyValue],
  construct: (_rt, args) => new CsKeyValue(args[0], args[1]),
  props: {
    Key: prop((self: CsKeyValue) => self.key),
    Value: prop((self: CsKeyValue) => self.value),
  },
  methods: {
    ToString: (rt, self: CsKeyValue) =>
      `[${toDotNetStringRt(rt, self.key)}, ${toDotNetStringRt(rt, self.value)}]`,
  },
});

function comparerArg(args: unknown[]): CsComparer | null {
  const c = args.find((a) => a instanceof CsComparer);
  return (c as CsComparer | undefined) ?? null;
}

const dictMethods: Record<string, Method> = {
  Add: (rt, self: CsDictionary, args) => {
    if (self.has(args[0])) {
      throw argError(
        `An item with the same key has already been added. Key: ${toDotNetStringRt(rt, args[0])}`,
      );
    }
    self.set(rt, args[0], args[1]);
    return null;
  },
  TryAdd: (rt, self: CsDictionary, args) => {
    if (self.has(args[0])) return false;
    self.set(rt, args[0], args[1]);
    return true;
  },
  ContainsKey: (_rt, self: CsDictionary, args) => self.has(args[0]),
  ContainsValue: (_rt, self: CsDictionary, args) =>
    [...self.map.values()].some((e) => equals(e.value, args[0])),
  Remove: (_rt, self: CsDictionary, args) => self.delete(args[0]),
  Clear: (_rt, self: CsDictionary) => {
    self.map.clear();
    return null;
  },
  TryGetValue: (_rt, self: CsDictionary, args) => {
    const e = self.get(args[0]);
    setOut(args[1], e ? e.value : null);
    return e !== undefined;
  },
  GetValueOrDefault: (_rt, self: CsDictionary, args) => {
    const e = self.get(args[0]);
    return e ? e.value : (args[1] ?? null);
  },
};

export const DictionaryType = defineType({
  name: 'Dictionary`2',
  namespace: 'System.Collections.Generic',
  aliases: ['Dictionary', 'IDictionary`2', 'IReadOnlyDictionary`2'],
  classes: [CsDictionary],
  construct: (rt, args) => {
    const d = new CsDictionary(comparerArg(args));
    const src = args.find((a) => a instanceof CsDictionary) as CsDictionary | undefined;
    if (src) for (const e of src.map.values()) d.set(rt, e.key, e.value);
    return d;
  },
  addItem: (rt, self: CsDictionary, args) => {
    dictMethods.Add!(rt, self, args, []);
  },
  props: {
    Count: prop((self: CsDictionary) => self.map.size),
    Keys: prop((self: CsDictionary) => [...self.map.values()].map((e) => e.key)),
    Values: prop((self: CsDictionary) => [...self.map.values()].map((e) => e.value)),
  },
  indexer: {
    get: (_rt, self: CsDictionary, args) => {
      const e = self.get(args[0]);
      if (!e) throw keyNotFound(args[0]);
      return e.value;
    },
    set: (rt, self: CsDictionary, args, v) => self.set(rt, args[0], v),
  },
  methods: dictMethods,
  enumerate: (self: CsDictionary) => [...self.map.values()].map((e) => new CsKeyValue(e.key, e.value)),
});

export const HashSetType = defineType({
  name: 'HashSet`1',
  namespace: 'System.Collections.Generic',
  aliases: ['HashSet', 'ISet`1'],
  classes: [CsHashSet],
  construct: (rt, args) => {
    const s = new CsHashSet(comparerArg(args));
    const src = args.find((a) => a !== null && typeof a === 'object' && !(a instanceof CsComparer));
    if (src) for (const x of enumerate(src)) s.add(rt, x);
    return s;
  },
  addItem: (rt, self: CsHashSet, args) => {
    self.add(rt, args[0]);
  },
  props: { Count: prop((self: CsHashSet) => self.map.size) },
  methods: {
    Add: (rt, self: CsHashSet, args) => self.add(rt, args[0]),
    Contains: (_rt, self: CsHashSet, args) => self.has(args[0]),
    Remove: (_rt, self: CsHashSet, args) =>
      self.map.delete(args[0] === null ? null : keyOf(args[0], self.comparer)),
    UnionWith: (rt, self: CsHashSet, args) => {
      for (const x of args[0] === self ? [...self.map.values()] : enumerate(args[0])) self.add(rt, x);
      return null;
    },
    Clear: (_rt, self: CsHashSet) => {
      self.map.clear();
      return null;
    },
  },
  enumerate: (self: CsHashSet) => self.map.values(),
});

// ---- the context's dictionaries ----

/** Headers, Url.Query, form fields: IReadOnlyDictionary<string, string[]> with APIM's joining GetValueOrDefault. */
export const StringValuesMapType = defineType({
  name: 'IReadOnlyDictionary<string, string[]>',
  classes: [StringValuesMap, HeaderCollection, QueryCollection],
  props: {
    Count: prop((self: StringValuesMap) => self.size),
    Keys: prop((self: StringValuesMap) => self.names()),
    Values: prop((self: StringValuesMap) => [...self.entries()].map((e) => e[1])),
  },
  indexer: {
    get: (_rt, self: StringValuesMap, args) => {
      const v = self.get(str(args[0], 'key'));
      if (v === undefined) throw keyNotFound(args[0]);
      return v;
    },
  },
  methods: {
    GetValueOrDefault: (_rt, self: StringValuesMap, args) => {
      const name = args[0];
      if (typeof name !== 'string')
        throw new CsException('ArgumentNullException', "Value cannot be null. (Parameter 'key')");
      const v = self.peek(name);
      if (v === undefined) return args.length > 1 ? args[1] : null;
      return v.length === 1 ? v[0]! : v.join(',');
    },
    ContainsKey: (_rt, self: StringValuesMap, args) => self.has(str(args[0], 'key')),
    TryGetValue: (_rt, self: StringValuesMap, args) => {
      const v = self.get(str(args[0], 'key'));
      setOut(args[1], v ?? null);
      return v !== undefined;
    },
  },
  enumerate: (self: StringValuesMap) => [...self.entries()].map(([k, v]) => new CsKeyValue(k, v)),
});

/** MatchedParameters: IReadOnlyDictionary<string, string>. */
export const StringMapType = defineType({
  name: 'IReadOnlyDictionary<string, string>',
  classes: [Map],
  props: {
    Count: prop((self: Map<string, unknown>) => self.size),
    Keys: prop((self: Map<string, unknown>) => [...self.keys()]),
    Values: prop((self: Map<string, unknown>) => [...self.values()]),
  },
  indexer: {
    get: (_rt, self: Map<string, unknown>, args) => {
      const k = str(args[0], 'key');
      if (!self.has(k)) throw keyNotFound(k);
      return self.get(k);
    },
  },
  methods: {
    GetValueOrDefault: (_rt, self: Map<string, unknown>, args) => {
      const k = str(args[0], 'key');
      return self.has(k) ? self.get(k) : (args[1] ?? null);
    },
    ContainsKey: (_rt, self: Map<string, unknown>, args) => self.has(str(args[0], 'key')),
    TryGetValue: (_rt, self: Map<string, unknown>, args) => {
      const k = str(args[0], 'key');
      setOut(args[1], self.get(k) ?? null);
      return self.has(k);
    },
  },
  enumerate: (self: Map<string, unknown>) => [...self].map(([k, v]) => new CsKeyValue(k, v)),
});

/** context.Variables: IReadOnlyDictionary<string, object>; GetValueOrDefault<T> throws when the stored type is not T. */
export const VariablesType = defineType({
  name: 'IReadOnlyDictionary<string, object>',
  classes: [VariablesModel],
  props: {
    Count: prop((self: VariablesModel) => self.size),
    Keys: prop((self: VariablesModel) => [...self.entries()].map((e) => e[0])),
    Values: prop((self: VariablesModel) => [...self.entries()].map((e) => e[1])),
  },
  indexer: {
    get: (_rt, self: VariablesModel, args) => {
      const k = str(args[0], 'key');
      if (!self.has(k)) throw keyNotFound(k);
      return self.get(k);
    },
  },
  methods: {
    ContainsKey: (_rt, self: VariablesModel, args) => self.has(str(args[0], 'key')),
    TryGetValue: (_rt, self: VariablesModel, args) => {
      const k = str(args[0], 'key');
      setOut(args[1], self.has(k) ? self.get(k) : null);
      return self.has(k);
    },
    GetValueOrDefault: (_rt, self: VariablesModel, args, typeArgs) => {
      const k = str(args[0], 'key');
      const t = typeArgs[0];
      if (!self.has(k)) return args.length > 1 ? args[1] : t ? defaultFor(t) : null;
      const v = self.get(k);
      if (t && v !== null && !isInstance(t, v) && t.info.name !== 'Object') {
        throw invalidCast(typeName(v), t.info.fullName);
      }
      return v;
    },
  },
  enumerate: (self: VariablesModel) => [...self.entries()].map(([k, v]) => new CsKeyValue(k, v)),
});

function defaultFor(t: CsType): unknown {
  return t.nullable || t.arrayRank ? null : t.info.defaultValue;
}
