/**
 * The policy reference, generated from the element declarations so it cannot drift from what the loader
 * accepts: every element Portcullis runs (sections, scopes, attributes, children) and every element it only
 * declares, with the reason it is rejected. `portcullis policy-reference` prints it (Markdown or JSON);
 * docs/policy-reference.md is that output, and a test keeps the two equal.
 */

import { DIFFERENCES } from './differences.js';
import { DECLARED, ELEMENT_LIST } from './elements/index.js';
import type { AttributeKind, AttributeSchema, AttributeSpec, ChildSpec, ContentSpec } from './schema.js';

export interface AttributeReference {
  readonly name: string;
  readonly kind: AttributeKind;
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly required: boolean;
  readonly default?: string | number | boolean;
  /** Whether a policy expression may give the value. */
  readonly expression: boolean;
}

export type ContentReference =
  | { readonly kind: 'empty' | 'policies' | 'any' }
  | { readonly kind: 'text'; readonly expression: boolean; readonly required: boolean }
  | { readonly kind: 'elements'; readonly text: boolean; readonly children: readonly ChildReference[] };

export interface ChildReference {
  readonly name: string;
  readonly min?: number;
  readonly max?: number;
  /** A child that is a policy element of its own (see that element for its attributes and content). */
  readonly policy: boolean;
  readonly attributes: readonly AttributeReference[];
  readonly content: ContentReference;
}

export interface ElementReference {
  readonly name: string;
  readonly summary: string;
  /** Where it behaves differently from API Management, and why (absent when it does not). */
  readonly differences?: readonly string[];
  readonly sections: readonly string[];
  readonly scopes: readonly string[];
  readonly attributes: readonly AttributeReference[];
  readonly content: ContentReference;
}

export interface DeclaredReference {
  readonly name: string;
  readonly why: string;
}

export interface PolicyReference {
  readonly elements: readonly ElementReference[];
  readonly declared: readonly DeclaredReference[];
}

const byName = <T extends { readonly name: string }>(list: readonly T[]): T[] =>
  [...list].sort((a, b) => a.name.localeCompare(b.name));

function attributeReference(name: string, spec: AttributeSpec): AttributeReference {
  return {
    name,
    kind: spec.kind,
    ...(spec.values === undefined ? {} : { values: spec.values }),
    ...(spec.min === undefined ? {} : { min: spec.min }),
    ...(spec.max === undefined ? {} : { max: spec.max }),
    required: spec.required === true,
    ...(spec.default === undefined ? {} : { default: spec.default }),
    expression: spec.expression,
  };
}

const attributesReference = (schema: AttributeSchema | undefined): AttributeReference[] =>
  Object.entries(schema ?? {}).map(([name, spec]) => attributeReference(name, spec));

function contentReference(spec: ContentSpec): ContentReference {
  switch (spec.kind) {
    case 'empty':
    case 'policies':
    case 'any':
      return { kind: spec.kind };
    case 'text':
      return { kind: 'text', expression: spec.expression, required: spec.required === true };
    case 'elements':
      return { kind: 'elements', text: spec.text === true, children: spec.elements.map(childReference) };
  }
}

function childReference(spec: ChildSpec): ChildReference {
  return {
    name: spec.name,
    ...(spec.min === undefined ? {} : { min: spec.min }),
    ...(spec.max === undefined ? {} : { max: spec.max }),
    policy: spec.policy === true,
    attributes: attributesReference(spec.attributes),
    content: contentReference(spec.content ?? { kind: 'empty' }),
  };
}

/** The reference as data (`portcullis policy-reference --format json`), elements in alphabetical order. */
export function policyReferenceData(): PolicyReference {
  return {
    elements: byName(ELEMENT_LIST).map((e) => ({
      name: e.name,
      summary: e.summary,
      ...differencesOf(e.name),
      sections: e.sections,
      scopes: e.scopes,
      attributes: attributesReference(e.attributes),
      content: contentReference(e.content),
    })),
    declared: byName([...DECLARED.values()]).map((d) => ({
      name: d.name,
      why: 'missing' in d.unavailable ? d.unavailable.missing : `needs Azure ${d.unavailable.azure}`,
    })),
  };
}

function attributeRow(a: AttributeReference): string {
  const type = a.kind === 'enum' ? (a.values ?? []).join(' \\| ') : a.kind;
  const bounds = [a.min === undefined ? '' : `≥ ${a.min}`, a.max === undefined ? '' : `≤ ${a.max}`]
    .filter((b) => b !== '')
    .join(', ');
  const presence = a.required
    ? 'required'
    : a.default === undefined
      ? 'optional'
      : `default \`${a.default}\``;
  return `| \`${a.name}\` | ${type}${bounds ? ` (${bounds})` : ''} | ${presence} | ${a.expression ? 'yes' : 'no'} |`;
}

function contentText(content: ContentReference): string {
  switch (content.kind) {
    case 'empty':
      return 'empty';
    case 'text':
      return content.expression ? 'text or expression' : 'text';
    case 'policies':
      return 'policy statements';
    case 'any':
      return 'any XML';
    case 'elements':
      return content.children
        .map((c) => `\`<${c.name}>\`${c.min ? ` ×≥${c.min}` : ''}${c.max !== undefined ? ` ×≤${c.max}` : ''}`)
        .join(', ');
  }
}

/** The reference as Markdown (`portcullis policy-reference`, docs/policy-reference.md). */
export function policyReference(): string {
  const reference = policyReferenceData();
  const out = [
    '# Policy elements',
    '',
    'Generated from `src/policy/elements` by `portcullis policy-reference`. Every element also accepts `id`.',
    '',
  ];
  for (const e of reference.elements) {
    out.push(`## ${e.name}`, '', e.summary, '');
    out.push(
      `Sections: ${e.sections.join(', ')}. Scopes: ${e.scopes.join(', ')}. Content: ${contentText(e.content)}.`,
      '',
    );
    for (const difference of e.differences ?? []) out.push(`Differs from API Management: ${difference}`, '');
    if (e.attributes.length > 0) {
      out.push(
        '| attribute | type | | expression |',
        '|---|---|---|---|',
        ...e.attributes.map(attributeRow),
        '',
      );
    }
  }
  out.push('## Declared, not run', '', '| element | why |', '|---|---|');
  for (const d of reference.declared) out.push(`| \`${d.name}\` | ${d.why} |`);
  return `${out.join('\n')}\n`;
}

/** The known differences (differences.ts) that concern element `name`: printed under it in the reference. */
function differencesOf(name: string): { differences?: readonly string[] } {
  const differences = DIFFERENCES.filter((d) => d.elements?.includes(name)).map(
    (d) => `${d.portcullis} ${d.why.charAt(0).toUpperCase()}${d.why.slice(1)}`,
  );
  return differences.length > 0 ? { differences } : {};
}
