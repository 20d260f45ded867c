import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { coveragePage, readSurface } from '../../../scripts/policy-coverage.js';
import {
  attributeCoverage,
  declaredParts,
  elementCoverage,
  policyCoveragePage,
  REFUSED_PARTS,
} from '../../../src/policy/coverage.js';
import { PolicyLoadError } from '../../../src/policy/diagnostics.js';
import { compilePolicyDocument, readPolicyDocument } from '../../../src/policy/document.js';
import { DECLARED, ELEMENTS } from '../../../src/policy/elements/index.js';

const REGENERATE = 'node scripts/with-supported-node.js node --import tsx scripts/policy-coverage.ts --write';
const surface = readSurface();

function loadCodes(statement: string, section: string): string[] {
  const xml = `<policies><${section}>${statement}</${section}></policies>`;
  try {
    compilePolicyDocument(readPolicyDocument(xml, { file: 'p.xml' }), { scope: 'operation' });
    return [];
  } catch (error) {
    if (error instanceof PolicyLoadError) return error.diagnostics.map((d) => `${d.code}: ${d.message}`);
    throw error;
  }
}

describe('docs/policy-coverage.md', () => {
  it(`is generated from the code and reference/apim-policies.json (regenerate: ${REGENERATE})`, () => {
    expect(policyCoveragePage(surface)).toBe(readFileSync(coveragePage, 'utf8'));
  });

  it('knows every element of the policy reference index: implemented, or refused with a reason', () => {
    const unknown = elementCoverage(surface).filter((row) => row.status === undefined);
    expect(unknown.map((row) => row.name)).toEqual([]);
    const indexed = new Set(elementCoverage(surface).map((row) => row.name));
    // Nothing Portcullis runs or refuses by name is missing from the index copy either.
    expect([...ELEMENTS.keys(), ...DECLARED.keys()].filter((name) => !indexed.has(name))).toEqual([]);
  });

  it('has the documented attributes and child elements of every implemented element', () => {
    expect([...ELEMENTS.keys()].filter((name) => surface.elements[name] === undefined)).toEqual([]);
  });

  it('accepts every documented attribute and child element, or refuses it with a reason', () => {
    const missing = attributeCoverage(surface).flatMap((element) =>
      element.parts.filter((p) => p.coverage.kind === 'missing').map((p) => `${element.element} ${p.part}`),
    );
    expect(missing).toEqual([]);
  });

  it.each(REFUSED_PARTS.map((r) => [r.part, r] as const))(
    'refuses %s at load, as the table says',
    (_, refused) => {
      const [element, ...rest] = refused.part.split(/(?=[@/])/);
      const part = rest.join('').replace(/^\//, '');
      expect(surface.elements[element!]?.documented).toContain(part);
      // A refusal of a part the declaration does not take would be the loader's "has no attribute", not a reason.
      expect(declaredParts(ELEMENTS.get(element!)!)).toContain(part);
      const codes = loadCodes(refused.sample, refused.section ?? 'inbound');
      expect(codes).toEqual(
        expect.arrayContaining([expect.stringMatching(/^not-(supported|implemented): /)]),
      );
    },
  );

  it('renders a refusal and an unknown element so a reader sees them', () => {
    const page = policyCoveragePage({
      ...surface,
      index: {
        ...surface.index,
        categories: [{ name: 'Made up', elements: ['made-up', 'cross-domain'] }],
        laterAdditions: { ...surface.index.laterAdditions, categories: [] },
      },
      elements: { 'set-header': { page: 'p', copy: 'c', documented: ['@name', '@not-there'] } },
    });
    expect(page).toContain('| Made up | `made-up` | **unknown** |');
    expect(page).toMatch(/\| Made up \| `cross-domain` \| refused: .+ \|/);
    expect(page).toContain('| `@not-there` | **missing** |');
    expect(page).toContain('Also accepts: `@exists-action`, `value`.');
  });
});
