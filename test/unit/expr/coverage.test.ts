import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readDocumentedTypes, typesPage } from '../../../scripts/expression-types.js';
import { expressionTypesPage, staleMissingRows, typeCoverage } from '../../../src/expr/coverage.js';

const REGENERATE =
  'node scripts/with-supported-node.js node --import tsx scripts/expression-types.ts --write';
const documented = readDocumentedTypes();

// The table ".NET Framework types allowed in policy expressions":
// https://learn.microsoft.com/azure/api-management/api-management-policy-expressions#CLRTypes
describe('docs/expression-types.md', () => {
  it(`is generated from the library and reference/apim-expression-types.json (regenerate: ${REGENERATE})`, () => {
    expect(expressionTypesPage(documented)).toBe(readFileSync(typesPage, 'utf8'));
  });

  it('knows every documented type: available in the library, or missing with a reason', () => {
    const unknown = documented.types.filter((t) => typeCoverage(t).status === 'unknown').map((t) => t.type);
    expect(unknown).toEqual([]);
  });

  it('knows every member the table lists: available, or missing with a reason', () => {
    const unexplained = documented.types.flatMap((t) => {
      const c = typeCoverage(t);
      return c.status === 'available'
        ? c.missing.filter((m) => m.reason === undefined).map((m) => `${t.type}.${m.member}`)
        : [];
    });
    expect(unexplained).toEqual([]);
  });

  it('lists no reason for a type or member the library has since gained, nor for one the table does not name', () => {
    expect(staleMissingRows(documented.types)).toEqual([]);
  });

  it('copies the whole documented table (130 types, as on the page of 2026-01-15)', () => {
    expect(documented.types).toHaveLength(130);
    expect(new Set(documented.types.map((t) => t.type)).size).toBe(130);
  });
});
