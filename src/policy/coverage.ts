/**
 * How much of API Management's documented policy surface Portcullis covers, computed rather than kept by hand: the
 * documented lists (element names from the policy reference index, attributes and child elements from each element's
 * page) are a copy in reference/apim-policies.json; what Portcullis accepts is read from the element declarations
 * (elements/). scripts/policy-coverage.ts renders docs/policy-coverage.md from both, and
 * test/unit/policy/coverage.test.ts fails when the page, the copy and the code disagree.
 *
 * A documented part is either accepted (declared, so the loader takes it and the element acts on it) or refused at
 * load with a reason: an element of DECLARED_ELEMENTS, or a row of REFUSED_PARTS below (declared, but refused when
 * used, with the sample the test loads to see the refusal happen).
 */
import type { ElementDefinition } from './element.js';
import { DECLARED, ELEMENTS } from './elements/index.js';
import type { AttributeSchema, ChildSpec, ContentSpec } from './schema.js';

/** reference/apim-policies.json. */
export interface DocumentedSurface {
  readonly about: string;
  readonly retrieved: string;
  readonly index: DocumentedIndex & {
    readonly copy: string;
    /** Pages the docs' table of contents lists that the copied index predates. */
    readonly laterAdditions: DocumentedIndex;
  };
  readonly elements: Readonly<Record<string, DocumentedElement>>;
}

interface DocumentedIndex {
  readonly source: string;
  readonly categories: readonly { readonly name: string; readonly elements: readonly string[] }[];
}

export interface DocumentedElement {
  /** The element's reference page. */
  readonly page: string;
  /** Where the copy was read: repository, path and commit. */
  readonly copy: string;
  /** `@attr`, `child`, `child@attr`, nested with `/`: `required-claims/claim@match`. */
  readonly documented: readonly string[];
}

/** A documented part Portcullis declares but refuses when a document uses it, and why. */
export interface RefusedPart {
  /** `element@attr` or `element/child…`, as in the documented lists. */
  readonly part: string;
  readonly reason: string;
  /** An inbound statement using the part; the coverage test loads it and expects the refusal. */
  readonly sample: string;
  /** The section the sample is loaded in (inbound when absent). */
  readonly section?: 'inbound' | 'outbound';
}

const SERVICE_FABRIC = 'needs Azure Service Fabric';
const DAPR = 'needs a Dapr sidecar (a self-hosted-gateway feature)';
const ENVOY_CERTIFICATES =
  'an Envoy limit: Envoy presents backend certificates from the configuration (tls.certificates, tls.backends)';

const sf = (attribute: string): RefusedPart => ({
  part: `set-backend-service@${attribute}`,
  reason: SERVICE_FABRIC,
  sample: `<set-backend-service backend-id="b" ${attribute}="x" />`,
});
const dapr = (attribute: string): RefusedPart => ({
  part: `set-backend-service@${attribute}`,
  reason: DAPR,
  sample: `<set-backend-service backend-id="dapr" ${attribute}="x" />`,
});

export const REFUSED_PARTS: readonly RefusedPart[] = [
  {
    part: 'authentication-certificate@body',
    reason: ENVOY_CERTIFICATES,
    sample: '<authentication-certificate body="@(new byte[0])" />',
  },
  {
    part: 'authentication-certificate@password',
    reason: ENVOY_CERTIFICATES,
    sample: '<authentication-certificate certificate-id="c" password="p" />',
  },
  ...[
    'sf-resolve-condition',
    'sf-service-instance-name',
    'sf-partition-key',
    'sf-listener-name',
    'sf-replica-type',
  ].map(sf),
  ...['dapr-app-id', 'dapr-method', 'dapr-namespace'].map(dapr),
  {
    part: 'validate-jwt/issuer-signing-keys/key@certificate-id',
    reason: 'needs the API Management certificate store (give the key inline, or n and e)',
    sample:
      '<validate-jwt><issuer-signing-keys><key certificate-id="c" /></issuer-signing-keys></validate-jwt>',
  },
];

/** What Portcullis does with one documented part. */
export type PartCoverage =
  | { readonly kind: 'accepted' }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'missing' };

export interface ElementCoverage {
  readonly name: string;
  readonly category: string;
  /** `implemented`, or the reason it is refused; undefined when Portcullis does not know the element at all. */
  readonly status: 'implemented' | { readonly refused: string } | undefined;
}

/** Every element of the index (and of its later additions), with what Portcullis does with it. */
export function elementCoverage(surface: DocumentedSurface): ElementCoverage[] {
  const rows: ElementCoverage[] = [];
  for (const category of [...surface.index.categories, ...surface.index.laterAdditions.categories]) {
    for (const name of category.elements) {
      const declared = DECLARED.get(name);
      rows.push({
        name,
        category: category.name,
        status: ELEMENTS.has(name)
          ? 'implemented'
          : declared === undefined
            ? undefined
            : {
                refused:
                  'missing' in declared.unavailable
                    ? declared.unavailable.missing
                    : `needs Azure ${declared.unavailable.azure}`,
              },
      });
    }
  }
  return rows;
}

/** The parts an element's declaration accepts, in the documented lists' notation. */
export function declaredParts(element: ElementDefinition): string[] {
  return [...attributeParts('', element.attributes), ...contentParts('', element.content)];
}

function attributeParts(prefix: string, schema: AttributeSchema | undefined): string[] {
  return Object.keys(schema ?? {}).map((name) => `${prefix}@${name}`);
}

function contentParts(prefix: string, content: ContentSpec): string[] {
  return content.kind === 'elements' ? content.elements.flatMap((child) => childParts(prefix, child)) : [];
}

function childParts(prefix: string, child: ChildSpec): string[] {
  const path = `${prefix}${child.name}`;
  // A child that is a policy element of its own is covered under that element.
  if (child.policy === true) return [path];
  return [
    path,
    ...attributeParts(path, child.attributes),
    ...contentParts(`${path}/`, child.content ?? { kind: 'empty' }),
  ];
}

export interface AttributeCoverage {
  readonly element: string;
  readonly page: string;
  /** Each documented part, in the page's order. */
  readonly parts: readonly { readonly part: string; readonly coverage: PartCoverage }[];
  /** Parts Portcullis accepts that the copied page does not document (newer pages, Portcullis's own). */
  readonly beyond: readonly string[];
}

const refusedByPart = new Map(REFUSED_PARTS.map((r) => [r.part, r.reason]));

/** Every documented attribute and child element of every implemented element, with what Portcullis does. */
export function attributeCoverage(surface: DocumentedSurface): AttributeCoverage[] {
  return Object.entries(surface.elements)
    .filter(([name]) => ELEMENTS.has(name))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, documented]) => {
      const accepted = new Set(declaredParts(ELEMENTS.get(name)!));
      const parts = documented.documented.map((part) => {
        const refused = refusedByPart.get(`${name}${part.startsWith('@') ? '' : '/'}${part}`);
        const coverage: PartCoverage =
          refused !== undefined
            ? { kind: 'refused', reason: refused }
            : accepted.has(part)
              ? { kind: 'accepted' }
              : { kind: 'missing' };
        return { part, coverage };
      });
      const listed = new Set(documented.documented);
      return {
        element: name,
        page: documented.page,
        parts,
        beyond: [...accepted].filter((part) => !listed.has(part)),
      };
    });
}

const show = (part: string) => `\`${part}\``;

/** docs/policy-coverage.md. */
export function policyCoveragePage(surface: DocumentedSurface): string {
  const out = [
    '# Policy coverage',
    '',
    "What Portcullis does with every element, attribute and child element of API Management's policy reference.",
    'Generated by `node scripts/with-supported-node.js node --import tsx scripts/policy-coverage.ts --write` from',
    `the element declarations (\`src/policy/elements\`) and a copy of the documentation retrieved ${surface.retrieved}`,
    '(`reference/apim-policies.json`: each list with its page and the commit it was read at); a unit test fails',
    'when the code and this page disagree. Attribute types, defaults and expressions are in the',
    '[policy reference](policy-reference.md); behaviour that differs from API Management is in',
    '[differences](differences.md).',
    '',
    '## Elements',
    '',
    `Every element of the [policy reference index](${surface.index.source}) (${surface.index.copy}), and the`,
    `pages added since (${surface.index.laterAdditions.source}).`,
    '',
    '| category | element | Portcullis |',
    '|---|---|---|',
  ];
  for (const row of elementCoverage(surface)) {
    const status =
      row.status === 'implemented'
        ? 'implemented'
        : row.status === undefined
          ? '**unknown**'
          : `refused: ${row.status.refused}`;
    out.push(`| ${row.category} | \`${row.name}\` | ${status} |`);
  }
  out.push(
    '',
    '## Attributes and child elements',
    '',
    'For each implemented element: every attribute (`@name`) and child element its page documents (`child`,',
    '`child@attribute`, nested with `/`), accepted or refused at load with the reason. "Also accepts" lists what',
    'Portcullis takes beyond the copied page (newer revisions of the page, or its own).',
    '',
  );
  for (const element of attributeCoverage(surface)) {
    out.push(`### ${element.element}`, '', `[Reference page](${element.page}).`, '');
    if (element.parts.length === 0) out.push('The page documents no attributes or child elements.', '');
    else {
      out.push('| documented | Portcullis |', '|---|---|');
      for (const { part, coverage } of element.parts) {
        const status =
          coverage.kind === 'accepted'
            ? 'accepted'
            : coverage.kind === 'refused'
              ? `refused: ${coverage.reason}`
              : '**missing**';
        out.push(`| ${show(part)} | ${status} |`);
      }
      out.push('');
    }
    if (element.beyond.length > 0) out.push(`Also accepts: ${element.beyond.map(show).join(', ')}.`, '');
  }
  return `${out.join('\n')}\n`;
}
