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

// Shorthands keep the element files readable.
export const str = (o: Partial<AttributeSpec> = {}): AttributeSpec => ({
  kind: 'string',
  expression: true,
  ...o,
});
export const int = (o: Partial<AttributeSpec> = {}): AttributeSpec => ({
  kind: 'int',
  expression: true,
  ...o,
});
export const num = (o: Partial<AttributeSpec> = {}): AttributeSpec => ({
  kind: 'number',
  expression: true,
  ...o,
});
export const bool = (o: Partial<AttributeSpec> = {}): AttributeSpec => ({
  kind: 'bool',
  expression: true,
  ...o,
});
export const oneOf = (values: readonly string[], o: Partial<AttributeSpec> = {}): AttributeSpec => ({
  kind: 'enum',
  values,
  expression: true,
  ...o,
});
export const EMPTY: ContentSpec = { kind: 'empty' };
export const POLICIES: ContentSpec = { kind: 'policies' };
export const elements = (...list: ChildSpec[]): ContentSpec => ({ kind: 'elements', elements: list });
export const text = (expression: boolean, required = false): ContentSpec => ({
  kind: 'text',
  expression,
  required,
});
