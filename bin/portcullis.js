#!/usr/bin/env node
// The `portcullis` command: the compiled CLI (dist/, built from src/ by scripts/build.js) on a supported Node. On an
// older Node it runs itself again on the pinned one that setup unpacked into .portcullis/ (scripts/node-runtime.js).
import { spawn } from 'node:child_process';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { standFor, supportedNodeFolder } from '../scripts/node-runtime.js';

const root = fileURLToPath(new URL('..', import.meta.url));

let nodeFolder;
try {
  nodeFolder = supportedNodeFolder(root);
} catch (error) {
  console.error(`portcullis: ${error.message}`);
  process.exit(1);
}

if (nodeFolder === undefined) {
  // V8's code cache on disk (the temporary directory, or NODE_COMPILE_CACHE): a start after the first skips parsing
  // and compiling the modules it loads.
  module.enableCompileCache?.();
  const { buildIfStale } = await import('../scripts/build.js');
  await buildIfStale(root);
  // Stack traces at .ts lines when asked for them; off otherwise, since mapping costs every stack that is made.
  if (process.env.PORTCULLIS_DEBUG === '1') process.setSourceMapsEnabled(true);
  await import('../dist/cli/main.js');
} else {
  const child = spawn(`${nodeFolder}/node`, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  standFor(child);
}
