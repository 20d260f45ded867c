/**
 * Writes docs/expression-types.md: what the expression library offers of every type and member API Management
 * allows in policy expressions (src/expr/coverage.ts), from the copy of the documented table in
 * reference/apim-expression-types.json. After changing the library or the copy:
 *
 *   node scripts/with-supported-node.js node --import tsx scripts/expression-types.ts --write
 *
 * Without --write it prints the page.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type DocumentedTypes, expressionTypesPage } from '../src/expr/coverage.js';

export const typesFile = fileURLToPath(new URL('../reference/apim-expression-types.json', import.meta.url));
export const typesPage = fileURLToPath(new URL('../docs/expression-types.md', import.meta.url));

export function readDocumentedTypes(): DocumentedTypes {
  return JSON.parse(readFileSync(typesFile, 'utf8')) as DocumentedTypes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = expressionTypesPage(readDocumentedTypes());
  if (process.argv.includes('--write')) writeFileSync(typesPage, page);
  else process.stdout.write(page);
}
