/**
 * Writes docs/policy-coverage.md: what Portcullis does with every documented policy element, attribute and child
 * element (src/policy/coverage.ts), from the copy of the documentation in reference/apim-policies.json. After
 * changing an element's declaration or the copy:
 *
 *   node scripts/with-supported-node.js node --import tsx scripts/policy-coverage.ts --write
 *
 * Without --write it prints the page.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type DocumentedSurface, policyCoveragePage } from '../src/policy/coverage.js';

export const surfaceFile = fileURLToPath(new URL('../reference/apim-policies.json', import.meta.url));
export const coveragePage = fileURLToPath(new URL('../docs/policy-coverage.md', import.meta.url));

export function readSurface(): DocumentedSurface {
  return JSON.parse(readFileSync(surfaceFile, 'utf8')) as DocumentedSurface;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const page = policyCoveragePage(readSurface());
  if (process.argv.includes('--write')) writeFileSync(coveragePage, page);
  else process.stdout.write(page);
}
