/**
 * The policy reference, generated from the element declarations so it cannot drift from what the loader
 * accepts: every element Portcullis runs (sections, scopes, attributes, children) and every element it only
 * declares, with the reason it is rejected.
 */

import { DECLARED, ELEMENT_LIST } from './elements/index.js';
import type { AttributeSpec, ContentSpec } from './schema.js';

function attribute(name: string, spec: AttributeSpec): string {
  const type = spec.kind === 'enum' ? (spec.values ?? []).join(' \\| ') : spec.kind;
  const bounds = [
    spec.min === undefined ? '' : `≥ ${spec.min}`,
    spec.max === undefined ? '' : `≤ ${spec.max}`,
  ]
    .filter((b) => b !== '')
    .join(', ');
  const required =
    spec.required === true
      ? 'required'
      : spec.default === undefined
        ? 'optional'
        : `default \`${spec.default}\``;
  return `| \`${name}\` | ${type}${bounds ? ` (${bounds})` : ''} | ${required} | ${spec.expression ? 'yes' : 'no'} |`;
}

function content(spec: ContentSpec): string {
  switch (spec.kind) {
    case 'empty':
      return 'empty';
    case 'text':
      return spec.expression ? 'text or expression' : 'text';
    case 'policies':
      return 'policy statements';
    case 'any':
      return 'any XML';
    case 'elements':
      return spec.elements
        .map((e) => `\`<${e.name}>\`${e.min ? ` ×≥${e.min}` : ''}${e.max !== undefined ? ` ×≤${e.max}` : ''}`)
        .join(', ');
  }
}

export function policyReference(): string {
  const out = [
    '# Policy elements',
    '',
    'Generated from `src/policy/elements`. Every element also accepts `id`.',
    '',
  ];
  for (const e of [...ELEMENT_LIST].sort((a, b) => a.name.localeCompare(b.name))) {
    out.push(`## ${e.name}`, '', e.summary, '');
    out.push(
      `Sections: ${e.sections.join(', ')}. Scopes: ${e.scopes.join(', ')}. Content: ${content(e.content)}.`,
      '',
    );
    const attrs = Object.entries(e.attributes);
    if (attrs.length > 0) {
      out.push(
        '| attribute | type | | expression |',
        '|---|---|---|---|',
        ...attrs.map(([n, s]) => attribute(n, s)),
        '',
      );
    }
  }
  out.push('## Declared, not run', '', '| element | why |', '|---|---|');
  for (const d of [...DECLARED.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const why =
      d.unavailable === 'not-implemented' ? 'not implemented yet' : `needs Azure ${d.unavailable.azure}`;
    out.push(`| \`${d.name}\` | ${why} |`);
  }
  return `${out.join('\n')}\n`;
}
