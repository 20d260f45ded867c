#!/usr/bin/env node
// Compiles src/ to dist/ — JavaScript with source maps — so no process pays a TypeScript compile when it starts.
// `node scripts/build.js` builds when the sources changed since the last build (`--force`: always); setup runs it,
// and so does bin/portcullis.js when it finds dist/ older than src/.
//
// esbuild transpiles each file on its own (no bundle: dist/ mirrors src/, so every `new URL('../..', import.meta.url)`
// in the sources still reaches the same folder, and a stack frame maps to one source file). Types are checked
// separately (`npm run check`, tsc --noEmit): a build that also type-checked, `tsc` to dist/, took 27 s here against
// esbuild's 0.4 s, and would run before every start after an edit. Node 24's own type stripping was the third way;
// it cannot run these sources as they are: their 1,500 relative imports name `.js` files (NodeNext resolution), which
// stripping does not map to `.ts`, and a dozen files use parameter properties, which it does not accept.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const STAMP = '.built-from';

/** The newest modification time under src/ (files and folders, so a deleted file counts) and how many entries. */
function sourcesState(sources) {
  let newest = statSync(sources).mtimeMs;
  let entries = 0;
  for (const entry of readdirSync(sources, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() && !entry.isDirectory()) continue;
    newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    entries += 1;
  }
  return `${newest} ${entries}`;
}

/** Whether dist/ was built from the sources as they are now. A checkout without src/ (an image) is always built. */
export function isBuildFresh(root) {
  const sources = path.join(root, 'src');
  if (!existsSync(sources)) return true;
  try {
    return readFileSync(path.join(root, 'dist', STAMP), 'utf8') === sourcesState(sources);
  } catch {
    return false;
  }
}

/**
 * Builds dist/ from src/. The new tree is written beside the old one and renamed into place, so a process that
 * starts meanwhile — several builds may race when many commands start at once after an edit — sees a whole tree.
 */
export async function build(root) {
  const { build: esbuild } = await import('esbuild');
  const sources = path.join(root, 'src');
  const state = sourcesState(sources);
  const entryPoints = readdirSync(sources, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
  const staging = path.join(root, `dist.building-${process.pid}`);
  await esbuild({
    entryPoints,
    outdir: staging,
    outbase: sources,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: 'linked',
    logLevel: 'error',
  });
  writeFileSync(path.join(staging, STAMP), state);
  const dist = path.join(root, 'dist');
  const retired = path.join(root, `dist.retired-${process.pid}`);
  try {
    renameSync(dist, retired);
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  try {
    renameSync(staging, dist);
  } catch (error) {
    // Another build won the race: its tree is as fresh as ours.
    if (!existsSync(dist)) throw error;
    rmSync(staging, { recursive: true, force: true });
  }
  rmSync(retired, { recursive: true, force: true });
}

/** Builds unless dist/ is fresh; resolves to whether it built. */
export async function buildIfStale(root) {
  if (isBuildFresh(root)) return false;
  await build(root);
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  if (process.argv.includes('--force')) await build(root);
  else await buildIfStale(root);
}
