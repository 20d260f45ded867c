/**
 * The type system behind member access. Every value an expression can touch has a TypeInfo listing, in Maps built
 * from explicit tables, exactly the members API Management exposes. Nothing is looked up on JavaScript objects by
 * name: a member that is not in a table does not exist, so `__proto__`, `constructor` and `prototype` cannot be
 * reached whatever the expression does.
 */
import type { PolicyContext } from '../context.js';
import type { ExpressionLimits } from '../limits.js';

/** Per-evaluation state threaded through every closure. */
export interface Rt {
  readonly ctx: PolicyContext;
  readonly limits: ExpressionLimits;
  steps: number;
  /** Milliseconds spent in regex searches so far (limits.maxRegexMilliseconds). */
  regexMilliseconds: number;
}

/** A .NET exception raised while evaluating; C# `catch` can see it. */
export class CsException extends Error {
  /** Offset in the expression source of the node that raised it (set by the compiler as it propagates). */
  offset: number | undefined;
  constructor(
    readonly type: string,
    message: string,
    readonly inner: CsException | null = null,
  ) {
    super(message);
  }
}

/** A resource limit was exceeded. Deliberately not a CsException: `catch (Exception)` must not swallow it. */
export class LimitError extends Error {
  offset: number | undefined;
}

export const nullRef = (what: string): CsException =>
  new CsException(
    'NullReferenceException',
    `Object reference not set to an instance of an object (${what} is null)`,
  );
export const invalidCast = (from: string, to: string): CsException =>
  new CsException('InvalidCastException', `Unable to cast object of type '${from}' to type '${to}'`);
export const argError = (message: string, type = 'ArgumentException'): CsException =>
  new CsException(type, message);
export const formatError = (message: string): CsException => new CsException('FormatException', message);

export function step(rt: Rt, n = 1): void {
  rt.steps += n;
  if (rt.steps > rt.limits.maxSteps) {
    throw new LimitError(`evaluation exceeded the limit of ${rt.limits.maxSteps} steps`);
  }
}

export function checkString(rt: Rt, s: string): string {
  checkStringLength(rt, s.length);
  return s;
}

/**
 * Builders call this with the length they are about to produce (computed first, or a running total) so that the
 * limit is raised before an oversized string is allocated, not after.
 */
export function checkStringLength(rt: Rt, length: number): void {
  if (length > rt.limits.maxStringLength) {
    throw new LimitError(
      `a string of ${length} characters exceeds the limit of ${rt.limits.maxStringLength}`,
    );
  }
}

/**
 * A string under construction: chunks are counted as they are added and the limit is raised as soon as the total
 * exceeds it, so the oversized result is never joined. `rt` null (rendering outside an evaluation) means no limit.
 */
export class BoundedText {
  private readonly chunks: string[] = [];
  private total = 0;
  constructor(private readonly rt: Rt | null) {}
  get length(): number {
    return this.total;
  }
  add(chunk: string): void {
    this.total += chunk.length;
    if (this.rt) checkStringLength(this.rt, this.total);
    this.chunks.push(chunk);
  }
  toString(): string {
    return this.chunks.join('');
  }
}

export function checkSize(rt: Rt, n: number): void {
  if (n > rt.limits.maxCollectionSize) {
    throw new LimitError(`a collection of ${n} elements exceeds the limit of ${rt.limits.maxCollectionSize}`);
  }
}

/** Stands for an argument whose value is only known when the expression runs (see ConstantArgsCheck). */
export const UNKNOWN_ARG: unique symbol = Symbol('unknown argument');

/**
 * Checks a call's arguments when the expression is compiled: each is its constant value (a literal, an enum member,
 * enum members combined with `|`) or UNKNOWN_ARG; missing trailing arguments are undefined. Throws ArgumentRefusal
 * to refuse the expression at load (the same check runs again at run time for values that were not constant).
 */
export type ConstantArgsCheck = (args: readonly unknown[]) => void;

/** Raised by a ConstantArgsCheck: the message says what is wrong with argument `argIndex`. */
export class ArgumentRefusal extends Error {
  constructor(
    message: string,
    readonly argIndex: number,
  ) {
    super(message);
  }
}

/** A resolved type reference: `List<string>`, `string[]`, `int?`. */
export interface CsType {
  readonly info: TypeInfo;
  readonly args: readonly CsType[];
  readonly arrayRank: number;
  readonly nullable: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: tables declare the receiver type each member expects; dispatch guarantees it.
export type Method = (rt: Rt, self: any, args: unknown[], typeArgs: readonly CsType[]) => unknown;
// biome-ignore lint/suspicious/noExplicitAny: see Method.
type Self = any;
export interface Property {
  get(rt: Rt, self: Self): unknown;
  /** Set on static properties whose value never changes (enum members): the compiler may use it as a constant. */
  readonly constant?: unknown;
  set?(rt: Rt, self: Self, value: unknown): void;
}
export interface Indexer {
  get(rt: Rt, self: Self, args: unknown[]): unknown;
  set?(rt: Rt, self: Self, args: unknown[], value: unknown): void;
}
/** A runtime class whose instances have a given .NET type. */
export type Ctor = abstract new (...args: never[]) => unknown;

/** The built-in types a library type may declare explicit conversions to. */
export type ConversionTarget = 'bool' | 'int' | 'long' | 'double' | 'decimal' | 'string';

export interface TypeSpec {
  /** The C# name used in messages and in GetType().Name. */
  name: string;
  /** Names this type can be written as in expressions (beyond `name`): 'string', 'System.String', … */
  aliases?: string[];
  /** Namespace for ToString() of objects without their own ToString. */
  namespace?: string;
  base?: TypeInfo;
  props?: Record<string, Property>;
  methods?: Record<string, Method>;
  staticProps?: Record<string, Property>;
  staticMethods?: Record<string, Method>;
  indexer?: Indexer;
  /** `new T(args)`; absent = not constructible from expressions. */
  construct?: (rt: Rt, args: unknown[], typeArgs: readonly CsType[]) => unknown;
  /** Compile-time checks of constant arguments, by static method name; `new` checks the constructor's. */
  constantArgChecks?: Record<string, ConstantArgsCheck>;
  /** Collection initializer `new T { a, { k, v } }`. */
  addItem?: (rt: Rt, self: Self, args: unknown[]) => void;
  /** `x is T` for this type. */
  test?: (v: unknown) => boolean;
  /** `(T)x` (explicit) or assignment to a T-typed local (implicit); absent = identity when `test` passes. */
  convert?: (v: unknown, explicit: boolean, type: CsType) => unknown;
  /** default(T) */
  defaultValue?: unknown;
  /**
   * `==` for a library type with value semantics (JValue against a JValue or a primitive); asked with this type's
   * value first. Absent = reference equality.
   */
  valueEquals?: (self: Self, other: unknown) => boolean;
  /**
   * Explicit conversion operators this type declares to built-in types (`(int)token`, `(string)token`), as
   * Newtonsoft's JToken does: the built-in type's `convert` asks the value's type for them. Inherited by subtypes.
   */
  explicitTo?: (self: Self, target: ConversionTarget) => unknown;
  /** IEnumerable: makes LINQ (Enumerable) extension methods and foreach available. */
  enumerate?: (self: Self) => Iterable<unknown>;
  /** `operator +` this type declares with its value on the left (XNamespace + string → XName); asked before `+`
   *  concatenates strings. */
  plus?: (rt: Rt, self: Self, right: unknown) => unknown;
  /** Runtime classes whose instances have this type. */
  classes?: Ctor[];
}

export interface TypeInfo {
  readonly name: string;
  readonly fullName: string;
  readonly base: TypeInfo | undefined;
  readonly props: ReadonlyMap<string, Property>;
  readonly methods: ReadonlyMap<string, Method>;
  readonly staticProps: ReadonlyMap<string, Property>;
  readonly staticMethods: ReadonlyMap<string, Method>;
  readonly indexer: Indexer | undefined;
  readonly construct: TypeSpec['construct'];
  readonly constantArgChecks: ReadonlyMap<string, ConstantArgsCheck>;
  readonly addItem: TypeSpec['addItem'];
  readonly test: (v: unknown) => boolean;
  readonly convert: TypeSpec['convert'];
  readonly defaultValue: unknown;
  readonly valueEquals: TypeSpec['valueEquals'];
  readonly explicitTo: TypeSpec['explicitTo'];
  readonly enumerate: TypeSpec['enumerate'];
  readonly plus: TypeSpec['plus'];
}

const toMap = <T>(o: Record<string, T> | undefined): Map<string, T> => {
  const m = new Map<string, T>();
  if (o) for (const k of Object.keys(o)) m.set(k, o[k]!);
  return m;
};

/** Every type by every name it can be written as. */
export const TYPES_BY_NAME = new Map<string, TypeInfo>();
const TYPES_BY_CLASS = new Map<unknown, TypeInfo>();
/** Every member name of every table: the compiler rejects any other name at compile time. */
export const KNOWN_MEMBERS = new Set<string>();

export function defineType(spec: TypeSpec): TypeInfo {
  const classes = spec.classes ?? [];
  const info: TypeInfo = {
    name: spec.name,
    fullName: spec.namespace ? `${spec.namespace}.${spec.name}` : spec.name,
    base: spec.base,
    props: toMap(spec.props),
    methods: toMap(spec.methods),
    staticProps: toMap(spec.staticProps),
    staticMethods: toMap(spec.staticMethods),
    indexer: spec.indexer,
    construct: spec.construct,
    constantArgChecks: toMap(spec.constantArgChecks),
    addItem: spec.addItem,
    test: spec.test ?? ((v) => v !== null && classes.some((c) => v instanceof c)),
    convert: spec.convert,
    defaultValue: spec.defaultValue ?? null,
    valueEquals: spec.valueEquals,
    explicitTo: spec.explicitTo ?? spec.base?.explicitTo,
    enumerate: spec.enumerate ?? spec.base?.enumerate,
    plus: spec.plus,
  };
  // A name or class claimed twice would go to whichever file loaded last: refuse it, so load order never matters.
  const names = new Set([spec.name, info.fullName, ...(spec.aliases ?? [])]);
  for (const n of names) {
    const earlier = TYPES_BY_NAME.get(n);
    if (earlier)
      throw new TypeError(`type name ${n} is claimed by both ${earlier.fullName} and ${info.fullName}`);
  }
  for (const c of classes) {
    const earlier = TYPES_BY_CLASS.get(c);
    if (earlier)
      throw new TypeError(`class ${c.name} is claimed by both ${earlier.fullName} and ${info.fullName}`);
  }
  for (const n of names) TYPES_BY_NAME.set(n, info);
  for (const c of classes) TYPES_BY_CLASS.set(c, info);
  for (const m of [info.props, info.methods, info.staticProps, info.staticMethods]) {
    for (const k of m.keys()) KNOWN_MEMBERS.add(k);
  }
  return info;
}

/** The types of values that are JavaScript primitives (and of any object without a type table). */
interface PrimitiveTypes {
  string: TypeInfo;
  int: TypeInfo;
  bool: TypeInfo;
  long: TypeInfo;
  delegate: TypeInfo;
  object: TypeInfo;
}
let primitiveTypes: PrimitiveTypes | null = null;

/** Called once, by the library file that defines them. */
export function setPrimitiveTypes(p: PrimitiveTypes): void {
  if (primitiveTypes) throw new TypeError('the primitive types are already set');
  primitiveTypes = p;
}

export function objectType(): TypeInfo {
  return primitiveTypes!.object;
}

/** The TypeInfo of a non-null runtime value. */
export function typeOf(v: unknown): TypeInfo {
  switch (typeof v) {
    case 'string':
      return primitiveTypes!.string;
    case 'number':
      return primitiveTypes!.int;
    case 'boolean':
      return primitiveTypes!.bool;
    case 'bigint':
      return primitiveTypes!.long;
    case 'function':
      return primitiveTypes!.delegate;
    case 'object': {
      if (v === null) break;
      const t = TYPES_BY_CLASS.get((v as object).constructor);
      if (t) return t;
      break;
    }
    default:
      break;
  }
  if (v === null || v === undefined) throw nullRef('value');
  // A JavaScript value without a type table must never reach an expression; treat it as opaque.
  return primitiveTypes!.object;
}

/** The explicit conversion to built-in types that a value's own type declares (JToken's), if any. */
export function declaredExplicitConversion(v: unknown): TypeInfo['explicitTo'] {
  return v === null || v === undefined ? undefined : typeOf(v).explicitTo;
}

export function typeName(v: unknown): string {
  return v === null || v === undefined ? 'null' : typeOf(v).fullName;
}

export function findProperty(t: TypeInfo, name: string): Property | undefined {
  for (let c: TypeInfo | undefined = t; c; c = c.base) {
    const p = c.props.get(name);
    if (p) return p;
  }
  return objectType().props.get(name);
}

/**
 * C# extension methods: methods of a static class that are called as members of another type (`token.AsJwt()`,
 * `bytes.Encrypt(…)`, LINQ's `items.Where(…)`). The file that declares them owns them; the receiving type's own table
 * is never edited, so no file depends on another having been loaded first.
 */
export interface ExtensionSpec {
  /** Who declares them (a .NET static class, or the API Management feature), named if two declare one method. */
  declaredBy: string;
  /** The type whose values (and whose subtypes' values) receive them; 'IEnumerable' = every enumerable type. */
  receiver: TypeInfo | 'IEnumerable';
  /**
   * With receiver 'IEnumerable': the class of the items these methods take (IEnumerable<XNode>, IEnumerable<JToken>).
   * Two declarers that both give one may share a method name, as C# tells `Descendants` of LINQ to XML from
   * Newtonsoft's by the sequence's static type: here a call goes to the declarer whose item class the sequence's
   * first non-null item has.
   */
  itemClass?: Ctor;
  methods: Record<string, Method>;
}

interface DeclaredExtension {
  readonly method: Method;
  readonly declaredBy: string;
  readonly itemClass: Ctor | undefined;
}

/** One method for two declarers of a name that say their item classes: the first non-null item decides. */
function byItemClass(a: DeclaredExtension, b: DeclaredExtension): DeclaredExtension {
  // Neither class: the same declarer whichever loaded first, so its error message does not depend on load order.
  const fallback = a.declaredBy < b.declaredBy ? a : b;
  const pick = (self: unknown): DeclaredExtension => {
    for (const x of enumerate(self)) {
      if (x === null || x === undefined) continue;
      return x instanceof b.itemClass! ? b : x instanceof a.itemClass! ? a : fallback;
    }
    return fallback;
  };
  return {
    method: (rt, self, args, typeArgs) => pick(self).method(rt, self, args, typeArgs),
    declaredBy: `${a.declaredBy} and ${b.declaredBy}`,
    itemClass: undefined,
  };
}
const EXTENSIONS_BY_RECEIVER = new Map<TypeInfo, Map<string, DeclaredExtension>>();
const ENUMERABLE_EXTENSIONS = new Map<string, DeclaredExtension>();

export function defineExtensions(spec: ExtensionSpec): void {
  const receiverName = spec.receiver === 'IEnumerable' ? spec.receiver : spec.receiver.fullName;
  let table =
    spec.receiver === 'IEnumerable' ? ENUMERABLE_EXTENSIONS : EXTENSIONS_BY_RECEIVER.get(spec.receiver);
  // Which of two declarations wins would depend on load order: refuse it instead, unless both say their item
  // classes (then the sequence's items decide, whatever the order).
  const shares = (earlier: DeclaredExtension): boolean =>
    spec.receiver === 'IEnumerable' && spec.itemClass !== undefined && earlier.itemClass !== undefined;
  for (const name of Object.keys(spec.methods)) {
    const earlier = table?.get(name);
    if (earlier && !shares(earlier)) {
      throw new TypeError(
        `extension method ${receiverName}.${name} is declared by both ${earlier.declaredBy} and ${spec.declaredBy}`,
      );
    }
  }
  if (!table) {
    table = new Map();
    EXTENSIONS_BY_RECEIVER.set(spec.receiver as TypeInfo, table);
  }
  for (const [name, method] of Object.entries(spec.methods)) {
    const declared = { method, declaredBy: spec.declaredBy, itemClass: spec.itemClass };
    const earlier = table.get(name);
    table.set(name, earlier ? byItemClass(earlier, declared) : declared);
    KNOWN_MEMBERS.add(name);
  }
}

/** Instance members (the type, its bases, then Object) win over extension methods, as in C#. */
export function findMethod(t: TypeInfo, name: string): Method | undefined {
  for (let c: TypeInfo | undefined = t; c; c = c.base) {
    const m = c.methods.get(name);
    if (m) return m;
  }
  const o = objectType().methods.get(name);
  if (o) return o;
  for (let c: TypeInfo | undefined = t; c; c = c.base) {
    const e = EXTENSIONS_BY_RECEIVER.get(c)?.get(name);
    if (e) return e.method;
  }
  return t.enumerate ? ENUMERABLE_EXTENSIONS.get(name)?.method : undefined;
}

export function findIndexer(t: TypeInfo): Indexer | undefined {
  for (let c: TypeInfo | undefined = t; c; c = c.base) if (c.indexer) return c.indexer;
  return undefined;
}

export function enumerate(v: unknown): Iterable<unknown> {
  if (v === null || v === undefined) throw nullRef('the collection');
  const t = typeOf(v);
  if (!t.enumerate) throw invalidCast(t.fullName, 'System.Collections.IEnumerable');
  return t.enumerate(v);
}

/** A readable property helper for tables. */
export const prop = (get: (self: Self, rt: Rt) => unknown): Property => ({
  get: (rt, self) => get(self, rt),
});
