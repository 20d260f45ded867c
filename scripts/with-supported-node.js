#!/usr/bin/env node
// `node scripts/with-supported-node.js COMMAND ARGS…` runs COMMAND with a supported Node first on PATH: the npm
// scripts use it so that vitest, tsc, biome and every `node` the tests start run on the pinned Node when the
// machine's own is too old (scripts/node-runtime.js). On a supported Node it only runs COMMAND.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { standFor, supportedNodeFolder } from './node-runtime.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/with-supported-node.js COMMAND [ARGS…]');
  process.exit(2);
}

let folder;
try {
  folder = supportedNodeFolder(root);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
const env =
  folder === undefined
    ? process.env
    : { ...process.env, PATH: `${folder}${path.delimiter}${process.env.PATH ?? ''}` };
const child = spawn(command, args, { stdio: 'inherit', env });
standFor(child);
