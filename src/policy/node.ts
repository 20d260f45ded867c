/**
 * A validated element of a policy document, handed to an element's `compile`. Attribute and text values are
 * already checked against the declaration: literals are parsed once, expressions compiled once, and both are
 * exposed as getters so the element's closure never looks at XML again.
 */
import { type CompiledExpression, toBoolean, toDotNetString, toInt32 } from '../expr/index.js';
import { credentialHeaderNames, credentialQueryNames } from '../redact.js';
import type { Flow, RunContext, Statement } from './runtime.js';
import type {
  AlwaysPresent,
  AttributeName,
  AttributeSchema,
  AttributeSpec,
  ChildAttributes,
  ChildContent,
  ChildName,
  ChildSpecNamed,
  ContentSpec,
  LiteralValueOf,
  RunValueOf,
  SpecOf,
  TextAlwaysPresent,
} from './schema.js';
import type { XmlElement } from './xml.js';

export type Getter<T> = (run: RunContext) => T;

export type Literal = string | number | boolean;

export type ValueSource =
  | { readonly kind: 'literal'; readonly value: Literal; readonly text: string }
  | { readonly kind: 'expression'; readonly expression: CompiledExpression; readonly text: string };

export interface Location {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

/** Where a node is, for a diagnostic: any node, whatever its declaration. */
export type NodeSite = Pick<PolicyNode, 'location' | 'path'>;

/** A getter of a declared attribute: always there when required or defaulted, else possibly absent. */
export type AttributeGetter<A extends AttributeSchema, N extends AttributeName<A>> =
  AlwaysPresent<SpecOf<A, N>> extends true
    ? Getter<RunValueOf<SpecOf<A, N>>>
    : Getter<RunValueOf<SpecOf<A, N>>> | undefined;

/** A raw getter (the expression's own result): always there when required or defaulted. */
export type RawGetter<A extends AttributeSchema, N extends AttributeName<A>> =
  AlwaysPresent<SpecOf<A, N>> extends true ? Getter<unknown> : Getter<unknown> | undefined;

/** A literal is certain only when the attribute is always present and may not be an expression. */
export type LiteralOf<A extends AttributeSchema, N extends AttributeName<A>> =
  SpecOf<A, N> extends {
    readonly expression: false;
  }
    ? AlwaysPresent<SpecOf<A, N>> extends true
      ? LiteralValueOf<SpecOf<A, N>>
      : LiteralValueOf<SpecOf<A, N>> | undefined
    : LiteralValueOf<SpecOf<A, N>> | undefined;

/** A child element, typed by its own declaration. */
export type ChildNode<C extends ContentSpec, N extends string> = PolicyNode<
  ChildAttributes<ChildSpecNamed<C, N>>,
  ChildContent<ChildSpecNamed<C, N>>
>;

/** The node an element with this declaration receives (for helpers that take part of an element's node). */
export type NodeOf<D extends { readonly attributes?: AttributeSchema; readonly content?: ContentSpec }> =
  PolicyNode<ChildAttributes<D>, ChildContent<D>>;

type TextGetter<C extends ContentSpec> =
  TextAlwaysPresent<C> extends true ? Getter<string> : Getter<string> | undefined;

/**
 * `A` and `C` are the element's declared attributes and content: reading an attribute the element did not declare
 * does not compile, and a required or defaulted one needs no check for absence. The loader builds nodes untyped
 * (the defaults); `defineElement` gives each element's `compile` its own.
 */
export class PolicyNode<A extends AttributeSchema = AttributeSchema, C extends ContentSpec = ContentSpec> {
  /** Compiled statements of `policies` content (choose/when, retry …); empty otherwise. */
  statements: readonly Statement[] = [];
  /** For a child declared `policy: true`: the compiled statement of that element. */
  statement: Statement | undefined;
  /**
   * The name the parent gives this element's value (set-header's header, set-query-parameter's parameter: its
   * literal `name`), by which a trace labels the value and knows a credential's.
   */
  namedBy: string | undefined;

  constructor(
    readonly name: string,
    /** Diagnostic path, e.g. `policies/inbound/choose[1]/when[2]`. */
    readonly path: string,
    /** LastError.Path, e.g. `choose\when[2]`. */
    readonly errorPath: string,
    readonly location: Location,
    readonly xml: XmlElement,
    /** Read through the typed accessors below, never by name alone. */
    private readonly attributes: ReadonlyMap<string, ValueSource>,
    readonly content: ValueSource | undefined,
    readonly children: readonly PolicyNode[],
    /** The declaration the attributes were checked against: a getter converts values to the declared kind. */
    private readonly specs: AttributeSchema = {},
  ) {}

  get id(): string {
    const v = this.attributes.get('id');
    return v?.kind === 'literal' ? String(v.value) : '';
  }

  has(name: AttributeName<A>): boolean {
    return this.attributes.has(name);
  }

  /** The value when it is a literal (or the default), undefined when absent or an expression. */
  literal<N extends AttributeName<A>>(name: N): LiteralOf<A, N> {
    const v = this.attributes.get(name);
    return (v?.kind === 'literal' ? v.value : undefined) as LiteralOf<A, N>;
  }

  /** Every attribute given as a literal (or defaulted), by name: for helpers shared by elements that declare alike. */
  literals(): { readonly [N in keyof A & string]: LiteralOf<A, N> } {
    const out: Record<string, Literal> = {};
    for (const [name, v] of this.attributes) if (v.kind === 'literal') out[name] = v.value;
    return out as { readonly [N in keyof A & string]: LiteralOf<A, N> };
  }

  isExpression(name: AttributeName<A>): boolean {
    return this.attributes.get(name)?.kind === 'expression';
  }

  /** The attribute as a getter of its declared kind (string, integer, number or boolean). */
  getter<N extends AttributeName<A>>(name: N): AttributeGetter<A, N> {
    const v = this.attributes.get(name);
    if (v === undefined) return undefined as AttributeGetter<A, N>;
    const what = `${this.name}/@${name}`;
    const kind: AttributeSpec['kind'] = this.specs[name]?.kind ?? 'string';
    const get = KIND_GETTERS[kind](v, what);
    // A boolean expression is a condition: a trace shows it as the branch it chose, not as a value. A password
    // (authentication-basic, send-request's proxy) computed by an expression is a credential there.
    return (kind === 'bool' ? get : watched(v, get, what, name === 'password')) as AttributeGetter<A, N>;
  }

  /**
   * The attribute's raw value: an expression's result as it is (set-variable, cache-store-value keep it).
   * `credential`: the value is a secret (a certificate's private key), which a trace must not show.
   */
  rawGetter<N extends AttributeName<A>>(name: N, credential = false): RawGetter<A, N> {
    const v = this.attributes.get(name);
    if (v === undefined) return undefined as RawGetter<A, N>;
    return watched(v, valueGetter(v), `${this.name}/@${name}`, credential) as RawGetter<A, N>;
  }

  /** The element's text as a getter (an expression or literal text), or undefined when empty. */
  text(): TextGetter<C> {
    const v = this.content;
    if (v === undefined) return undefined as TextGetter<C>;
    const name = this.namedBy?.toLowerCase();
    const credential =
      name !== undefined && (credentialHeaderNames.has(name) || credentialQueryNames.has(name));
    return watched(v, stringGetter(v), this.namedBy ?? this.name, credential) as TextGetter<C>;
  }

  child<N extends ChildName<C>>(name: N): ChildNode<C, N> | undefined {
    return this.children.find((c) => c.name === name) as ChildNode<C, N> | undefined;
  }

  /** Visits the children in document order, each typed by its own declaration (one handler per child name). */
  eachChild(visit: { readonly [N in ChildName<C>]: (child: ChildNode<C, N>) => void }): void {
    const handlers = visit as unknown as Readonly<Record<string, (child: PolicyNode) => void>>;
    for (const child of this.children) handlers[child.name]?.(child);
  }

  childrenNamed<N extends ChildName<C>>(name: N): ChildNode<C, N>[] {
    return this.children.filter((c) => c.name === name) as unknown as ChildNode<C, N>[];
  }
}

/**
 * An expression's getter that also tells a watched run (RunContext.watch: a trace) the value it computed. A literal
 * is shown where it was written and is not repeated; an unwatched run pays one field read.
 */
function watched<T>(v: ValueSource, get: Getter<T>, label: string, credential: boolean): Getter<T> {
  if (v.kind === 'literal') return get;
  return (run) => {
    const value = get(run);
    const watch = run.watch;
    if (watch !== undefined) watch.value(label, value, credential);
    return value;
  };
}

/** One getter maker per attribute kind: the declaration decides how a value is read, not the element. */
const KIND_GETTERS: Readonly<
  Record<AttributeSpec['kind'], (v: ValueSource, what: string) => Getter<string | number | boolean>>
> = {
  string: stringGetter,
  enum: stringGetter,
  int: intGetter,
  number: numberGetter,
  bool: boolGetter,
};

export function stringGetter(v: ValueSource): Getter<string> {
  if (v.kind === 'literal') {
    const s = String(v.value);
    return () => s;
  }
  const e = v.expression;
  return (run) => toDotNetString(e.evaluate(run.context));
}

/** A raw expression result, for elements that keep the runtime value (set-variable, cache-store-value). */
export function valueGetter(v: ValueSource): Getter<unknown> {
  if (v.kind === 'literal') {
    const s = String(v.value);
    return () => s;
  }
  const e = v.expression;
  return (run) => e.evaluate(run.context);
}

function intGetter(v: ValueSource, what: string): Getter<number> {
  if (v.kind === 'literal') {
    const n = Number(v.value);
    return () => n;
  }
  const e = v.expression;
  return (run) => {
    const r = e.evaluate(run.context);
    if (typeof r === 'string') {
      if (!/^\s*[-+]?\d+\s*$/.test(r)) throw new TypeError(`${what} must be an integer, got "${r}"`);
      return Number.parseInt(r, 10);
    }
    return toInt32(r);
  };
}

function numberGetter(v: ValueSource, what: string): Getter<number> {
  if (v.kind === 'literal') {
    const n = Number(v.value);
    return () => n;
  }
  const e = v.expression;
  return (run) => {
    const r = e.evaluate(run.context);
    const n = typeof r === 'number' ? r : Number(toDotNetString(r));
    if (!Number.isFinite(n)) throw new TypeError(`${what} must be a number, got "${toDotNetString(r)}"`);
    return n;
  };
}

function boolGetter(v: ValueSource, what: string): Getter<boolean> {
  if (v.kind === 'literal') {
    const b = v.value === true;
    return () => b;
  }
  const e = v.expression;
  return (run) => {
    const r = e.evaluate(run.context);
    if (typeof r === 'string') {
      const t = r.trim().toLowerCase();
      if (t === 'true') return true;
      if (t === 'false') return false;
      throw new TypeError(`${what} must be true or false, got "${r}"`);
    }
    return toBoolean(r);
  };
}

/** Runs statements in order; stops at the first that responds. Avoids an await per synchronous statement. */
export function sequence(statements: readonly Statement[]): Statement {
  if (statements.length === 0) return () => 'next';
  if (statements.length === 1) return statements[0]!;
  return (run) => {
    for (let i = 0; i < statements.length; i++) {
      const flow = statements[i]!(run);
      if (flow instanceof Promise) return continueAsync(flow, statements, i + 1, run);
      if (flow === 'respond') return 'respond';
    }
    return 'next';
  };
}

async function continueAsync(
  pending: Promise<Flow>,
  statements: readonly Statement[],
  from: number,
  run: RunContext,
): Promise<Flow> {
  if ((await pending) === 'respond') return 'respond';
  for (let i = from; i < statements.length; i++) {
    if ((await statements[i]!(run)) === 'respond') return 'respond';
  }
  return 'next';
}
