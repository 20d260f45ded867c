/**
 * Vitest's global setup: compiles src/ to dist/ when it changed since the last build, once before any test file
 * starts, because the tests run the real `portcullis` command (bin/portcullis.js runs dist/). The command would also
 * build a stale tree itself, but then every process a test file starts at once would race to do it.
 */
import { fileURLToPath } from 'node:url';
import { buildIfStale } from '../scripts/build.js';

export default async function setup(): Promise<void> {
  await buildIfStale(fileURLToPath(new URL('..', import.meta.url)));
}
