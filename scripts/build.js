#!/usr/bin/env node
// Compiles src/ to dist/ — JavaScript with source maps — so no process pays a TypeScript compile when it starts.
// `node scripts/build.js` builds when the sources changed since the last build (`--force`: always); setup runs it,
// and so does bin/portcullis.js when it finds dist/ older than src/.
//
// esbuild bundles the CLI (src/cli/main.ts) into dist/cli/main.js and chunks under dist/chunks/, split where the
// sources import lazily (each command, the importers, the telemetry exporters), so a process loads under a hundred
// files instead of resolving ~760 modules one by one: that resolution was half of an engine's start. Packages are bundled
// too, except those that find files beside themselves at run time (.proto files, native addons, worker scripts) or
// that the sources load on demand through createRequire — those stay in node_modules (`unbundled` below). Source
// maps (linked) map a stack frame back to its .ts line. Types are checked separately (`npm run check`, tsc
// --noEmit): a build that also type-checked, `tsc` to dist/, took 27 s here against esbuild's 1–2 s, and would run
// before every start after an edit. Node 24's own type stripping was the third way; it cannot run these sources as
// they are: their 1,500 relative imports name `.js` files (NodeNext resolution), which stripping does not map to
// `.ts`, and a dozen files use parameter properties, which it does not accept.
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const STAMP = '.built-from';

/**
 * Packages left in node_modules: each reads files that lie beside it (the gRPC proto loader and health check read
 * .proto files; thread-stream starts its worker script by path), loads a native addon (lmdb, msgpackr-extract), or is
 * loaded only on demand through createRequire (src/state/lazy-package.ts, the tokenizer), which a bundle cannot see.
 * pino is bundled: only its transports, which Portcullis does not use, reach thread-stream's worker, and loading pino
 * from node_modules file by file cost ~15 ms of every start. protobufjs
 * is bundled: the engine only reads a precompiled descriptor with it (proto/ext_proc.descriptor.json), and the copy
 * proto-loader loads for itself is used by test clients and the ext_authz server, never mixed with the engine's.
 */
const unbundled = [
  '@grpc/proto-loader',
  'grpc-health-check',
  'thread-stream',
  'lmdb',
  'msgpackr',
  'msgpackr-extract',
  'gpt-tokenizer',
  'ioredis',
  'kafkajs',
  'esbuild',
  // WebAssembly libxml2 with a top-level await: imported by validate-content only when a policy validates XML.
  'libxml2-wasm',
];

const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/**
 * Node's own modules reached through require() rather than import, in the bundle: for an ES module import Node builds
 * a namespace that reads every export, and `node:http`'s include getters that load undici (fetch, WebSocket) — 70 ms
 * of a loaded engine's start against 4 ms for require('node:http'). Each static import becomes a one-line CommonJS
 * module that requires it; esbuild's interop gives the importer the same default and named exports. A dynamic
 * import() is left alone: its namespace would hold only `default` (a package's `(await import('fs')).promises`
 * would be undefined).
 */
const builtinsThroughRequire = {
  name: 'builtins-through-require',
  setup(build) {
    build.onResolve({ filter: /^[a-z_:/0-9]+$/ }, (args) =>
      builtins.has(args.path) && args.kind === 'import-statement'
        ? { path: args.path, namespace: 'node-builtin' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * The newest modification time under src/ (files and folders, so a deleted file counts) and how many entries, and
 * that of package-lock.json: the bundle holds the packages too, so an install that changed them builds again.
 */
function sourcesState(sources) {
  let newest = statSync(sources).mtimeMs;
  const lock = path.join(path.dirname(sources), 'package-lock.json');
  if (existsSync(lock)) newest = Math.max(newest, statSync(lock).mtimeMs);
  let entries = 0;
  for (const entry of readdirSync(sources, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() && !entry.isDirectory()) continue;
    newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
    entries += 1;
  }
  return `${newest} ${entries}`;
}

/**
 * Whether dist/ was built from the sources as they are now. A checkout without src/ (an image) is always built.
 * @param {string} root the checkout
 * @returns {boolean}
 */
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
 * @param {string} root the checkout
 * @returns {Promise<void>}
 */
export async function build(root) {
  const { build: esbuild } = await import('esbuild');
  const sources = path.join(root, 'src');
  const state = sourcesState(sources);
  const staging = path.join(root, `dist.building-${process.pid}`);
  await esbuild({
    entryPoints: [path.join(sources, 'cli', 'main.ts')],
    outdir: staging,
    outbase: sources,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    external: unbundled,
    plugins: [builtinsThroughRequire],
    format: 'esm',
    platform: 'node',
    target: 'node24',
    sourcemap: 'linked',
    // Bundled CommonJS packages call require() for Node's own modules; an ES module has no require of its own.
    banner: {
      js: "import { createRequire as createRequireForBundle } from 'node:module'; const require = createRequireForBundle(import.meta.url);",
    },
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

/**
 * Builds unless dist/ is fresh; resolves to whether it built.
 * @param {string} root the checkout
 * @returns {Promise<boolean>}
 */
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
