/**
 * The small schema language every element declares: where it may appear, its attributes and its content.
 * The loader checks documents against these declarations, so each element file only says what it accepts.
 */

export const SECTIONS = ['inbound', 'backend', 'outbound', 'on-error'] as const;
export type Section = (typeof SECTIONS)[number];

/** Broad → narrow. `workspace` is accepted in declarations but Portcullis has no workspaces. */
export const SCOPES = ['global', 'workspace', 'product', 'api', 'operation'] as const;
export type Scope = (typeof SCOPES)[number];

/** A fragment is checked where it is included; this marks "inside a fragment document". */
export type Where = { readonly section: Section; readonly scope: Scope };

export const ALL_SECTIONS: readonly Section[] = SECTIONS;
export const ALL_SCOPES: readonly Scope[] = SCOPES;
/** The scopes most elements allow in the reference (no workspace on older pages). */
export const GPAO: readonly Scope[] = ['global', 'product', 'api', 'operation'];

export type AttributeKind = 'string' | 'int' | 'number' | 'bool' | 'enum';

export interface AttributeSpec {
  readonly kind: AttributeKind;
  /** Allowed values of an enum (compared case-sensitively, as API Management does). */
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly required?: boolean;
  /** Applied when the attribute is absent. */
  readonly default?: string | number | boolean;
  /** Whether a policy expression may give the value. */
  readonly expression: boolean;
}

/** What an element holds between its tags. */
export type ContentSpec =
  | { readonly kind: 'empty' }
  /** Text (or one expression); `required` rejects an empty element. */
  | {
      readonly kind: 'text';
      readonly expression: boolean;
      readonly required?: boolean;
      /** Keep leading/trailing whitespace of literal text (bodies); other text is trimmed. */
      readonly preserveWhitespace?: boolean;
      /** Child elements are part of the text (a literal XML body or a Liquid template producing XML). */
      readonly markup?: boolean;
    }
  /** Policy statements allowed in the enclosing section (choose/when, retry, limit-concurrency …). */
  | { readonly kind: 'policies' }
  /** Named child elements, each with its own declaration. */
  | { readonly kind: 'elements'; readonly elements: readonly ChildSpec[]; readonly text?: boolean }
  /** Anything (kept as raw XML, e.g. an XSLT stylesheet); not interpreted by the loader. */
  | { readonly kind: 'any' };

export interface ChildSpec {
  readonly name: string;
  readonly min?: number;
  /** Omitted = unbounded. */
  readonly max?: number;
  /** A child that is itself a policy element (return-response ⊃ set-header) uses the element's declaration. */
  readonly policy?: true;
  /** For `policy` children: the message they act on (return-response builds a response). */
  readonly target?: 'pending-response' | 'pending-request';
  readonly attributes?: Readonly<Record<string, AttributeSpec>>;
  readonly content?: ContentSpec;
}

/** What a literal attribute value is once parsed: the loader turns `int`/`number` into numbers, `bool` into booleans. */
export type AttributeValue = string | number | boolean;

/** The declared attributes of an element (or of a child element). */
export type AttributeSchema = Readonly<Record<string, AttributeSpec>>;

/*
 * Types derived from a declaration, so that an element reads its attributes as the declaration says: a required or
 * defaulted attribute always has a value by the time `compile` runs (the loader reported it otherwise), an optional
 * one may be absent, and a name the element did not declare does not compile.
 */

/** The value a literal of this attribute holds: an enum's own values, else the kind's type. */
export type LiteralValueOf<S extends AttributeSpec> = S extends {
  readonly kind: 'enum';
  readonly values: readonly (infer V extends string)[];
}
  ? V
  : KindValue<S['kind']>;

/** What a getter of this attribute returns at run time: an expression may give an enum any string. */
export type RunValueOf<S extends AttributeSpec> = S extends { readonly expression: false }
  ? LiteralValueOf<S>
  : KindValue<S['kind']>;

type KindValue<K extends AttributeKind> = K extends 'string' | 'enum'
  ? string
  : K extends 'int' | 'number'
    ? number
    : K extends 'bool'
      ? boolean
      : never;

/** Required or defaulted: the loader guarantees a value before `compile` sees the node. */
export type AlwaysPresent<S extends AttributeSpec> = S extends { readonly required: true }
  ? true
  : S extends { readonly default: AttributeValue }
    ? true
    : false;

/** `id` (LastError.PolicyId) is accepted on every element without being declared. */
export type IdSpec = { readonly kind: 'string'; readonly expression: false };

/** The attribute names an element may read: the declared ones and `id`. */
export type AttributeName<A extends AttributeSchema> = (keyof A & string) | 'id';

export type SpecOf<A extends AttributeSchema, N extends AttributeName<A>> = N extends keyof A ? A[N] : IdSpec;

/** The child declarations of `elements` content (never for any other content). */
type ChildSpecsOf<C extends ContentSpec> = C extends {
  readonly kind: 'elements';
  readonly elements: readonly (infer S)[];
}
  ? S
  : never;

/** The names of the children an element declares. */
export type ChildName<C extends ContentSpec> =
  ChildSpecsOf<C> extends infer S ? (S extends { readonly name: infer N extends string } ? N : never) : never;

/** The declaration of the child called `N` (a declaration whose name is not a literal matches any name). */
export type ChildSpecNamed<C extends ContentSpec, N extends string> =
  ChildSpecsOf<C> extends infer S
    ? S extends { readonly name: infer M extends string }
      ? N extends M
        ? S
        : never
      : never
    : never;

/** A child declaration without attributes accepts none (but `id`). */
export type ChildAttributes<S> = S extends { readonly attributes?: infer A }
  ? NonNullable<A> extends AttributeSchema
    ? NonNullable<A>
    : NoAttributes
  : NoAttributes;

/** A child declaration without content is empty. */
export type ChildContent<S> = S extends { readonly content?: infer C }
  ? NonNullable<C> extends ContentSpec
    ? NonNullable<C>
    : typeof EMPTY
  : typeof EMPTY;

// biome-ignore lint/complexity/noBannedTypes: an empty attribute schema is exactly `{}`.
export type NoAttributes = {};

/** Whether text content is guaranteed: `text(…, true)` rejects an empty element at load. */
export type TextAlwaysPresent<C extends ContentSpec> = C extends {
  readonly kind: 'text';
  readonly required: true;
}
  ? true
  : false;

/** The options a shorthand takes: everything but the kind, with a default of the kind's own type. */
type Options<T extends AttributeValue> = Omit<Partial<AttributeSpec>, 'kind' | 'values' | 'default'> & {
  readonly default?: T;
};

/** A declaration as written: its kind, and the options given (so `required: true` stays visible to the types). */
type Declared<K extends AttributeKind, O> = { readonly kind: K; readonly expression: boolean } & Readonly<O>;

// Shorthands keep the element files readable.
export const str = <const O extends Options<string> = NoAttributes>(o?: O): Declared<'string', O> =>
  ({ kind: 'string', expression: true, ...o }) as Declared<'string', O>;
export const int = <const O extends Options<number> = NoAttributes>(o?: O): Declared<'int', O> =>
  ({ kind: 'int', expression: true, ...o }) as Declared<'int', O>;
export const num = <const O extends Options<number> = NoAttributes>(o?: O): Declared<'number', O> =>
  ({ kind: 'number', expression: true, ...o }) as Declared<'number', O>;
export const bool = <const O extends Options<boolean> = NoAttributes>(o?: O): Declared<'bool', O> =>
  ({ kind: 'bool', expression: true, ...o }) as Declared<'bool', O>;
export const oneOf = <const V extends readonly string[], const O extends Options<V[number]> = NoAttributes>(
  values: V,
  o?: O,
): Declared<'enum', O> & { readonly values: V } =>
  ({ kind: 'enum', values, expression: true, ...o }) as Declared<'enum', O> & { readonly values: V };
/** One declaration under each of several names (a family of attributes: sf-*, dapr-*, certificate claims). */
export const each = <const K extends string, S extends AttributeSpec>(
  names: readonly K[],
  spec: S,
): Readonly<Record<K, S>> => Object.fromEntries(names.map((name) => [name, spec])) as Record<K, S>;
export const EMPTY = { kind: 'empty' } as const satisfies ContentSpec;
export const POLICIES = { kind: 'policies' } as const satisfies ContentSpec;
export const elements = <const L extends readonly ChildSpec[]>(
  ...list: L
): { readonly kind: 'elements'; readonly elements: L } => ({ kind: 'elements', elements: list });
export const text = <const R extends boolean = false>(
  expression: boolean,
  required?: R,
): { readonly kind: 'text'; readonly expression: boolean; readonly required: R } => ({
  kind: 'text',
  expression,
  required: (required ?? false) as R,
});
