#!/bin/sh
':' //; for node in "$(dirname "$(readlink -f "$0")")"/../.portcullis/node-*/bin/node; do [ -x "$node" ] && exec "$node" --min-semi-space-size=8 "$0" "$@"; done; exec node --min-semi-space-size=8 "$0" "$@"
// The `portcullis` command: the compiled CLI (dist/, built from src/ by scripts/build.js) on a supported Node.
//
// Run as a program (`bin/portcullis.js`, npx, node_modules/.bin), the line above is shell: it starts the pinned Node
// that setup unpacked into .portcullis/ when there is one (setup does so only when the machine's Node is older than
// the supported line), else `node`, on this same file with the V8 flags of scripts/node-runtime.js (`nodeFlags`) —
// one Node start instead of an end-of-life Node's start (100 ms of CPU here) plus a hand-over. To JavaScript the
// line is a string and a comment. Run by an older Node explicitly (`node bin/portcullis.js`), the file hands itself
// over below (scripts/node-runtime.js).
import { spawn } from 'node:child_process';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { nodeFlags, standFor, supportedNodeFolder } from '../scripts/node-runtime.js';

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
  // Node writes that cache when the process exits; a process that is killed instead (an engine or service under
  // `up` ends with a signal more often than not) would never write it, and every start would compile again. Written
  // also once the command has had a second to load what it loads.
  setTimeout(() => module.flushCompileCache?.(), 1000).unref();
  const { buildIfStale } = await import('../scripts/build.js');
  await buildIfStale(root);
  // Stack traces at .ts lines when asked for them; off otherwise, since mapping costs every stack that is made.
  if (process.env.PORTCULLIS_DEBUG === '1') process.setSourceMapsEnabled(true);
  await import('../dist/cli/main.js');
} else {
  const args = [...nodeFlags, fileURLToPath(import.meta.url), ...process.argv.slice(2)];
  const child = spawn(`${nodeFolder}/node`, args, {
    stdio: 'inherit',
  });
  standFor(child);
}
