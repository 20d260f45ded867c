import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder holding Portcullis's package.json (and proto/, bin/, .venv/). Found by walking up from this module rather
 * than by a fixed `../..`, because where this module lies depends on how it runs: src/ under vitest, a chunk of the
 * bundle under dist/ when the command runs.
 */
function findPackageRoot(start: string): string {
  for (let folder = start; ; folder = path.dirname(folder)) {
    if (existsSync(path.join(folder, 'package.json')) && existsSync(path.join(folder, 'proto')))
      return folder;
    if (path.dirname(folder) === folder) throw new Error(`no Portcullis package.json above ${start}`);
  }
}

export const packageRoot: string = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));
