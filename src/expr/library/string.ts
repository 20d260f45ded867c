/** System.String (instance and static members) and StringComparison / StringSplitOptions / StringComparer. */

import {
  argError,
  BoundedText,
  CsException,
  checkSize,
  checkStringLength,
  declaredExplicitConversion,
  defineType,
  enumerate,
  invalidCast,
  type Method,
  prop,
  type Rt,
  typeName,
} from '../runtime/core.js';
import { CsEnum, makeEnum } from '../runtime/enum.js';
import { CsChar } from '../runtime/values.js';
import { defineEnumType } from './enums.js';
import { compositeFormat, enumValue, hashString, int, joinWithinLimit, paramsArray, str } from './helpers.js';

export const StringComparison = makeEnum('StringComparison', {
  CurrentCulture: 0,
  CurrentCultureIgnoreCase: 1,
  InvariantCulture: 2,
  InvariantCultureIgnoreCase: 3,
  Ordinal: 4,
  OrdinalIgnoreCase: 5,
});
defineEnumType(StringComparison, 'System');
const Comparison = StringComparison.members;

export const StringSplitOptions = makeEnum('StringSplitOptions', {
  None: 0,
  RemoveEmptyEntries: 1,
  TrimEntries: 2,
});
defineEnumType(StringSplitOptions, 'System');
const SplitOptions = StringSplitOptions.members;

const collator = new Intl.Collator('en', { sensitivity: 'variant' });
const collatorIgnoreCase = new Intl.Collator('en', { sensitivity: 'accent' });

/** Compares two strings under a StringComparison value (culture comparisons use an invariant-like collator). */
export function compareStrings(a: string, b: string, comparison: number): number {
  switch (comparison) {
    case Comparison.Ordinal:
      return a < b ? -1 : a > b ? 1 : 0;
    case Comparison.OrdinalIgnoreCase: {
      const x = a.toUpperCase();
      const y = b.toUpperCase();
      return x < y ? -1 : x > y ? 1 : 0;
    }
    case Comparison.CurrentCultureIgnoreCase:
    case Comparison.InvariantCultureIgnoreCase:
      return Math.sign(collatorIgnoreCase.compare(a, b));
    default:
      return Math.sign(collator.compare(a, b));
  }
}

const IGNORE_CASE_COMPARISONS: ReadonlySet<number> = new Set([
  Comparison.CurrentCultureIgnoreCase,
  Comparison.InvariantCultureIgnoreCase,
  Comparison.OrdinalIgnoreCase,
]);
const ignoresCase = (comparison: number): boolean => IGNORE_CASE_COMPARISONS.has(comparison);

function comparisonArg(v: unknown, fallback: number = Comparison.Ordinal): number {
  if (v === undefined) return fallback;
  const c = enumValue(v, StringComparison);
  if (c !== null) return c;
  if (typeof v === 'boolean') return v ? Comparison.OrdinalIgnoreCase : Comparison.Ordinal; // (…, bool ignoreCase)
  throw argError(`expected a StringComparison, got '${typeName(v)}'`);
}

const fold = (s: string, comparison: number): string => (ignoresCase(comparison) ? s.toUpperCase() : s);

function textArg(v: unknown, what: string): string {
  if (v instanceof CsChar) return String.fromCharCode(v.code);
  return str(v, what);
}

function checkRange(cond: boolean, param: string): void {
  if (!cond) {
    throw new CsException(
      'ArgumentOutOfRangeException',
      `Index and length must refer to a location within the string. (Parameter '${param}')`,
    );
  }
}

function charSet(args: unknown[]): Set<number> | null {
  if (args.length === 0) return null;
  const list = args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  return new Set(list.map((c) => (c instanceof CsChar ? c.code : textArg(c, 'trimChars').charCodeAt(0))));
}

const isWs = (c: number): boolean => /\s/u.test(String.fromCharCode(c));

function trim(s: string, set: Set<number> | null, start: boolean, end: boolean): string {
  let i = 0;
  let j = s.length;
  const hit = (c: number): boolean => (set ? set.has(c) : isWs(c));
  if (start) while (i < j && hit(s.charCodeAt(i))) i++;
  if (end) while (j > i && hit(s.charCodeAt(j - 1))) j--;
  return s.slice(i, j);
}

function split(rt: Rt, s: string, args: unknown[]): string[] {
  let separators: string[] = [];
  let count = Number.MAX_SAFE_INTEGER;
  let options: number = SplitOptions.None;
  const rest: unknown[] = [];
  for (const a of args) {
    const o = enumValue(a, StringSplitOptions);
    if (o !== null) options = o;
    else rest.push(a);
  }
  if (rest.length >= 2 && typeof rest[rest.length - 1] === 'number') count = rest.pop() as number;
  for (const a of rest) {
    if (Array.isArray(a)) separators.push(...a.map((x) => textArg(x, 'separator')));
    else if (a !== null) separators.push(textArg(a, 'separator'));
  }
  separators = separators.filter((x) => x !== '');
  const parts: string[] = [];
  if (separators.length === 0) {
    // No separator: split on white space.
    let cur = '';
    for (const ch of s) {
      if (/\s/u.test(ch)) {
        parts.push(cur);
        cur = '';
      } else cur += ch;
    }
    parts.push(cur);
  } else {
    let start = 0;
    let i = 0;
    while (i <= s.length) {
      if (parts.length === count - 1) break;
      const sep = i < s.length ? separators.find((x) => s.startsWith(x, i)) : undefined;
      if (sep !== undefined) {
        parts.push(s.slice(start, i));
        i += sep.length;
        start = i;
      } else {
        i++;
      }
    }
    parts.push(s.slice(start));
  }
  let out = parts;
  if (options & SplitOptions.TrimEntries) out = out.map((p) => p.trim());
  if (options & SplitOptions.RemoveEmptyEntries) out = out.filter((p) => p !== '');
  if (count === 0) out = [];
  checkSize(rt, out.length);
  return out;
}

function indexOf(s: string, args: unknown[], last: boolean): number {
  const needle = textArg(args[0], 'value');
  let start: number | undefined;
  let count: number | undefined;
  let comparison: number = Comparison.Ordinal;
  for (const a of args.slice(1)) {
    if (a instanceof CsEnum) comparison = comparisonArg(a);
    else if (start === undefined) start = int(a);
    else count = int(a);
  }
  const h = fold(s, comparison);
  const n = fold(needle, comparison);
  if (!last) {
    const from = start ?? 0;
    checkRange(from >= 0 && from <= s.length, 'startIndex');
    const idx = h.indexOf(n, from);
    if (count !== undefined && idx >= 0 && idx + n.length > from + count) return -1;
    return idx;
  }
  const from = start ?? s.length - 1;
  return h.lastIndexOf(n, from - n.length + 1 < 0 ? 0 : from - n.length + 1 + (n.length ? 0 : 1));
}

function pad(rt: Rt, s: string, args: unknown[], left: boolean): string {
  const width = int(args[0], 'totalWidth');
  if (width < 0)
    throw new CsException(
      'ArgumentOutOfRangeException',
      "Non-negative number required. (Parameter 'totalWidth')",
    );
  const ch = args[1] === undefined ? ' ' : textArg(args[1], 'paddingChar');
  checkStringLength(rt, width);
  return left ? s.padStart(width, ch) : s.padEnd(width, ch);
}

function replace(rt: Rt, s: string, args: unknown[]): string {
  const oldValue = textArg(args[0], 'oldValue');
  if (oldValue === '') throw argError("String cannot be of zero length. (Parameter 'oldValue')");
  const newValue = args[1] === null ? '' : textArg(args[1], 'newValue');
  const comparison = args.length > 2 ? comparisonArg(args[args.length - 1]) : 4;
  if (!ignoresCase(comparison)) {
    // Count the hits (without splitting) and check the result's size before building it.
    let hits = 0;
    for (let at = s.indexOf(oldValue); at >= 0; at = s.indexOf(oldValue, at + oldValue.length)) hits++;
    checkStringLength(rt, s.length + hits * (newValue.length - oldValue.length));
    return s.split(oldValue).join(newValue);
  }
  const h = s.toUpperCase();
  const n = oldValue.toUpperCase();
  const out = new BoundedText(rt);
  let i = 0;
  for (;;) {
    const j = h.indexOf(n, i);
    if (j < 0) break;
    out.add(s.slice(i, j));
    out.add(newValue);
    i = j + oldValue.length;
  }
  out.add(s.slice(i));
  return out.toString();
}

const methods: Record<string, Method> = {
  ToString: (_rt, self: string) => self,
  Equals: (_rt, self: string, args) => {
    if (typeof args[0] !== 'string') return false;
    const c = comparisonArg(args[1]);
    return fold(self, c) === fold(args[0], c);
  },
  GetHashCode: (_rt, self: string) => hashString(self),
  CompareTo: (_rt, self: string, args) => (args[0] === null ? 1 : compareStrings(self, str(args[0]), 0)),
  Contains: (_rt, self: string, args) => {
    const c = comparisonArg(args[1]);
    return fold(self, c).includes(fold(textArg(args[0], 'value'), c));
  },
  StartsWith: (_rt, self: string, args) => {
    const c = comparisonArg(args[1]);
    return fold(self, c).startsWith(fold(textArg(args[0], 'value'), c));
  },
  EndsWith: (_rt, self: string, args) => {
    const c = comparisonArg(args[1]);
    return fold(self, c).endsWith(fold(textArg(args[0], 'value'), c));
  },
  IndexOf: (_rt, self: string, args) => indexOf(self, args, false),
  LastIndexOf: (_rt, self: string, args) => indexOf(self, args, true),
  IndexOfAny: (_rt, self: string, args) => {
    const set = charSet([args[0]])!;
    for (let i = args[1] === undefined ? 0 : int(args[1]); i < self.length; i++)
      if (set.has(self.charCodeAt(i))) return i;
    return -1;
  },
  Substring: (_rt, self: string, args) => {
    const start = int(args[0], 'startIndex');
    checkRange(start >= 0 && start <= self.length, 'startIndex');
    if (args.length === 1) return self.slice(start);
    const len = int(args[1], 'length');
    checkRange(len >= 0 && start + len <= self.length, 'length');
    return self.slice(start, start + len);
  },
  Replace: (rt, self: string, args) => replace(rt, self, args),
  Remove: (_rt, self: string, args) => {
    const start = int(args[0]);
    checkRange(start >= 0 && start <= self.length, 'startIndex');
    if (args.length === 1) return self.slice(0, start);
    const count = int(args[1]);
    checkRange(count >= 0 && start + count <= self.length, 'count');
    return self.slice(0, start) + self.slice(start + count);
  },
  Insert: (rt, self: string, args) => {
    const start = int(args[0]);
    checkRange(start >= 0 && start <= self.length, 'startIndex');
    const value = str(args[1]);
    checkStringLength(rt, self.length + value.length);
    return self.slice(0, start) + value + self.slice(start);
  },
  Trim: (_rt, self: string, args) => trim(self, charSet(args), true, true),
  TrimStart: (_rt, self: string, args) => trim(self, charSet(args), true, false),
  TrimEnd: (_rt, self: string, args) => trim(self, charSet(args), false, true),
  ToUpper: (_rt, self: string) => self.toUpperCase(),
  ToLower: (_rt, self: string) => self.toLowerCase(),
  ToUpperInvariant: (_rt, self: string) => self.toUpperCase(),
  ToLowerInvariant: (_rt, self: string) => self.toLowerCase(),
  Split: (rt, self: string, args) => split(rt, self, args),
  PadLeft: (rt, self: string, args) => pad(rt, self, args, true),
  PadRight: (rt, self: string, args) => pad(rt, self, args, false),
  ToCharArray: (rt, self: string) => {
    checkSize(rt, self.length);
    return Array.from({ length: self.length }, (_, i) => new CsChar(self.charCodeAt(i)));
  },
  Normalize: (_rt, self: string) => self.normalize('NFC'),
  Clone: (_rt, self: string) => self,
};

const staticMethods: Record<string, Method> = {
  IsNullOrEmpty: (_rt, _s, args) => args[0] === null || args[0] === undefined || args[0] === '',
  IsNullOrWhiteSpace: (_rt, _s, args) =>
    args[0] === null || args[0] === undefined || (typeof args[0] === 'string' && args[0].trim() === ''),
  Format: (rt, _s, args) => {
    // string.Format(IFormatProvider, format, args…) — the provider is ignored (invariant culture).
    const first = typeof args[0] === 'string' ? 0 : 1;
    return compositeFormat(rt, str(args[first], 'format'), paramsArray(args, first + 1));
  },
  Join: (rt, _s, args) => {
    const sep = args[0] === null ? '' : textArg(args[0], 'separator');
    const items =
      args.length === 2 && args[1] !== null && typeof args[1] === 'object'
        ? enumerate(args[1])
        : args.slice(1);
    return joinWithinLimit(rt, items, sep);
  },
  Concat: (rt, _s, args) => {
    const items =
      args.length === 1 && args[0] !== null && typeof args[0] === 'object' ? enumerate(args[0]) : args;
    return joinWithinLimit(rt, items, '');
  },
  Compare: (_rt, _s, args) => {
    const a = args[0];
    const b = args[1];
    if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
    return compareStrings(str(a), str(b), args.length > 2 ? comparisonArg(args[2], 0) : 0);
  },
  CompareOrdinal: (_rt, _s, args) => {
    const a = args[0];
    const b = args[1];
    if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
    return compareStrings(str(a), str(b), 4);
  },
  Equals: (_rt, _s, args) => {
    const a = args[0];
    const b = args[1];
    if (a === null || b === null) return a === b;
    if (typeof a !== 'string' || typeof b !== 'string') return false;
    const c = comparisonArg(args[2]);
    return fold(a, c) === fold(b, c);
  },
};

export const StringType = defineType({
  name: 'String',
  namespace: 'System',
  aliases: ['string'],
  test: (v) => typeof v === 'string',
  convert: (v, explicit) => {
    if (typeof v === 'string') return v;
    const declared = explicit ? declaredExplicitConversion(v) : undefined;
    if (declared) return declared(v, 'string');
    throw invalidCast(typeName(v), 'System.String');
  },
  props: { Length: prop((self: string) => self.length) },
  methods,
  indexer: {
    get: (_rt, self: string, args) => {
      const i = int(args[0]);
      if (i < 0 || i >= self.length) {
        throw new CsException('IndexOutOfRangeException', 'Index was outside the bounds of the array.');
      }
      return new CsChar(self.charCodeAt(i));
    },
  },
  staticProps: { Empty: prop(() => '') },
  staticMethods,
  construct: (rt, args) => {
    if (args.length === 2 && args[0] instanceof CsChar) {
      const n = int(args[1]);
      if (n < 0)
        throw argError("Non-negative number required. (Parameter 'count')", 'ArgumentOutOfRangeException');
      checkStringLength(rt, n);
      return String.fromCharCode(args[0].code).repeat(n);
    }
    if (Array.isArray(args[0])) {
      // new string(char[] value, int startIndex, int length): that slice of the array.
      const chars = args[0] as (CsChar | null)[];
      const start = args.length === 3 ? int(args[1]) : 0;
      const length = args.length === 3 ? int(args[2]) : chars.length;
      if (start < 0 || length < 0 || start + length > chars.length) {
        throw argError(
          'Index was out of range. Must be non-negative and less than the size of the collection.',
          'ArgumentOutOfRangeException',
        );
      }
      return chars
        .slice(start, start + length)
        .map((c) => String.fromCharCode(c?.code ?? 0))
        .join('');
    }
    throw argError('new string(…) takes (char, int), (char[]) or (char[], int, int)');
  },
  // Lazily: foreach and LINQ over a long string count steps per character instead of materialising them all.
  enumerate: function* (self: string) {
    for (let i = 0; i < self.length; i++) yield new CsChar(self.charCodeAt(i));
  },
});

/** A StringComparer passed to Dictionary/HashSet/OrderBy/Distinct constructors and methods. */
/**
 * An IEqualityComparer / IComparer the collections and LINQ take. StringComparer is this class; a library comparer
 * of other values (LINQ to XML's node comparers) extends it and overrides `key` (what equal values share) or `order`.
 */
export class CsComparer {
  constructor(readonly comparison: number) {}
  key(v: unknown): unknown {
    return typeof v === 'string' && ignoresCase(this.comparison) ? v.toUpperCase() : v;
  }
  /** The order of two values this comparer orders itself; null leaves them to the default order. */
  order(_a: unknown, _b: unknown): number | null {
    return null;
  }
}

export const StringComparerType = defineType({
  name: 'StringComparer',
  namespace: 'System',
  classes: [CsComparer],
  test: (v) => v instanceof CsComparer && v.constructor === CsComparer,
  staticProps: {
    Ordinal: prop(() => new CsComparer(Comparison.Ordinal)),
    OrdinalIgnoreCase: prop(() => new CsComparer(Comparison.OrdinalIgnoreCase)),
    InvariantCulture: prop(() => new CsComparer(Comparison.InvariantCulture)),
    InvariantCultureIgnoreCase: prop(() => new CsComparer(Comparison.InvariantCultureIgnoreCase)),
    CurrentCulture: prop(() => new CsComparer(Comparison.CurrentCulture)),
    CurrentCultureIgnoreCase: prop(() => new CsComparer(Comparison.CurrentCultureIgnoreCase)),
  },
  methods: {
    Equals: (_rt, self: CsComparer, args) =>
      args.length === 2 ? self.key(args[0]) === self.key(args[1]) : self === args[0],
    Compare: (_rt, self: CsComparer, args) => compareStrings(str(args[0]), str(args[1]), self.comparison),
  },
});
