/**
 * How soon Portcullis answers: each CLI command a user types (median wall time of BENCH_RUNS starts, after one
 * warm-up), an engine process from spawn to its health check SERVING, and `up` on the example with one engine when
 * the engine or the service is killed (SIGKILL) under load — from the kill to the first success after the last
 * failure. Each row is printed beside its baseline: the same command the way it ran before the compiled CLI (the
 * sources through tsx, on the machine's own Node when setup provided a newer one), measured in the same run; the
 * kill rows, which need a whole `up` of the old kind, beside the figures measured before (issue #31's table).
 * BENCH_FRESH_CLONE=1 adds `npm start` on a fresh clone of this repository (npm and pip caches warm) to
 * "Portcullis is up.".
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../src/config/plan.js';
import { checkEngineHealth } from '../src/extproc/health-client.js';
import { root } from './support/stack.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
const cli = path.join(root, 'bin', 'portcullis.js');
const sources = path.join(root, 'src', 'cli', 'main.ts');
const example = path.join(root, 'examples', 'courses', 'gateway.yaml');

/** The `node` on PATH that is not the one running this (setup's pinned Node goes first on PATH), if any. */
function machineNode(): string | undefined {
  for (const folder of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(folder, 'node');
    if (folder && existsSync(candidate) && candidate !== process.execPath) {
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
      if (version !== process.version) return candidate;
    }
  }
  return undefined;
}

const oldNode = machineNode() ?? process.execPath;
const oldNodeVersion = execFileSync(oldNode, ['--version'], { encoding: 'utf8' }).trim();
/** The command as it ran before: the TypeScript sources through tsx's loader, on the machine's Node. */
const before = (args: readonly string[]) => [oldNode, '--import', 'tsx', sources, ...args];
/** The command as a user runs it now: bin/portcullis.js as a program (its shell line picks the Node and its flags). */
const now = (args: readonly string[]) => [cli, ...args];

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function wallMs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('exit', (status) =>
      status === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`${argv.join(' ')} exited ${status}: ${stderr}`)),
    );
  });
}

async function medianWallMs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  await wallMs(argv, env);
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) times.push(await wallMs(argv, env));
  return median(times);
}

/** From spawn to the engine's gRPC health check answering SERVING (polled every 5 ms). */
async function engineStartMs(argv: (port: number) => readonly string[]): Promise<number> {
  const times: number[] = [];
  for (let run = 0; run <= runs; run += 1) {
    const port = await freePort();
    const args = argv(port);
    const started = performance.now();
    const child = spawn(args[0]!, args.slice(1), { cwd: root, stdio: 'ignore' });
    try {
      while (!(await checkEngineHealth('127.0.0.1', port, 200))) {
        if (performance.now() - started > 30_000)
          throw new Error(`the engine on ${port} did not serve in 30 s`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (run > 0) times.push(performance.now() - started);
    } finally {
      child.kill('SIGKILL');
    }
  }
  return median(times);
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

function row(label: string, nowMs: number, beforeText: string, target: number): void {
  const verdict = nowMs <= target ? 'meets' : 'MISSES';
  console.log(
    `  ${label.padEnd(58)} ${seconds(nowMs).padStart(8)}   before ${beforeText.padEnd(24)} target ≤ ${seconds(target)} (${verdict})`,
  );
}

async function commandRow(label: string, args: readonly string[], target: number): Promise<void> {
  const nowMs = await medianWallMs(now(args));
  const beforeMs = await medianWallMs(before(args));
  row(label, nowMs, `${seconds(beforeMs)} (tsx, ${oldNodeVersion})`, target);
}

// ---- `up` killed under load --------------------------------------------------------------------------------------

interface Up {
  readonly child: ChildProcess;
  readonly gateway: string;
  output(): string;
}

async function startUp(): Promise<Up> {
  const child = spawn(process.execPath, [cli, 'up', '--config', example, '--log-format', 'json'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const deadline = Date.now() + 90_000;
  while (!output.includes('Portcullis is up.')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`up did not come up:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const gateway = /^ {2}gateway +(http:\/\/\S+?)\/?$/m.exec(output)?.[1];
  if (!gateway) throw new Error(`up printed no gateway URL:\n${output}`);
  return { child, gateway, output: () => output };
}

/** The pid of `up`'s child running `portcullis <command>` (from /proc). */
function childRunning(up: Up, command: string): number {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      // Not the warm spare `up` keeps for a single engine (`engine --standby`): it serves nothing until one dies.
      const at = argv.indexOf(cli);
      if (parent === up.child.pid && at > 0 && argv[at + 1] === command && !argv.includes('--standby'))
        return Number(name);
    } catch {
      // Gone meanwhile.
    }
  }
  throw new Error(`up runs no "${command}" child`);
}

/**
 * SIGKILL to `up`'s `command` child while 8 clients send `url` back to back; resolves to the time from the kill to
 * the first success after the last failure, once 3 s have passed without a failure.
 */
async function killUnderLoad(up: Up, command: string, url: string): Promise<number> {
  const events: { at: number; ok: boolean }[] = [];
  let running = true;
  const client = async () => {
    while (running) {
      const at = performance.now();
      const ok = await fetch(url, { signal: AbortSignal.timeout(5000) })
        .then(async (response) => {
          await response.arrayBuffer();
          return response.ok;
        })
        .catch(() => false);
      events.push({ at, ok });
    }
  };
  const clients = Array.from({ length: 8 }, client);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const killedAt = performance.now();
  process.kill(childRunning(up, command), 'SIGKILL');
  const deadline = killedAt + 30_000;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const lastFailure = events.findLast((event) => !event.ok && event.at >= killedAt);
    if (lastFailure && performance.now() - lastFailure.at > 3000) break;
    if (performance.now() > deadline)
      throw new Error(`${command} killed under load: still failing after 30 s`);
  }
  running = false;
  await Promise.all(clients);
  const lastFailure = events.findLast((event) => !event.ok && event.at >= killedAt)!;
  const backAt = events.find((event) => event.ok && event.at > lastFailure.at)!.at;
  return backAt - killedAt;
}

async function stopUp(up: Up): Promise<void> {
  up.child.kill('SIGINT');
  await new Promise((resolve) => up.child.once('exit', resolve));
}

// ---- npm start on a fresh clone ----------------------------------------------------------------------------------

async function freshCloneStartMs(): Promise<number> {
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-clone-'));
  try {
    execFileSync('git', ['clone', '--quiet', root, directory]);
    const started = performance.now();
    const child = spawn('npm', ['start'], {
      cwd: directory,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
    try {
      while (!output.includes('Portcullis is up.')) {
        if (child.exitCode !== null || performance.now() - started > 300_000) {
          throw new Error(`npm start on a fresh clone did not come up:\n${output}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return performance.now() - started;
    } finally {
      process.kill(-child.pid!, 'SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

console.log(
  `startup (${process.version} now, ${oldNodeVersion} + tsx before; median of ${runs} starts after a warm-up)`,
);
await commandRow('portcullis --version', ['--version'], 150);
await commandRow('portcullis validate examples/courses/gateway.yaml', ['validate', example], 600);
await commandRow(
  'portcullis envoy-config --config examples/courses/gateway.yaml',
  ['envoy-config', '--config', example],
  800,
);
await commandRow(
  'portcullis run --config examples/courses/gateway.yaml GET /courses/api/Course',
  ['run', '--config', example, 'GET', '/courses/api/Course'],
  800,
);
if (oldNode !== process.execPath) {
  // What a user with the end-of-life Node first on PATH types: the command itself (its shell line starts the pinned
  // Node), and `node bin/portcullis.js`, which starts the old Node first and hands over.
  const oldFirst = { PATH: `${path.dirname(oldNode)}${path.delimiter}${process.env.PATH ?? ''}` };
  const asProgram = await medianWallMs([cli, '--version'], oldFirst);
  row(`portcullis --version, ${oldNodeVersion} first on PATH`, asProgram, '(same as above)', 150);
  const handedOver = await medianWallMs([oldNode, cli, '--version'], oldFirst);
  console.log(
    `  ${`node bin/portcullis.js --version on ${oldNodeVersion} (hand-over)`.padEnd(58)} ${seconds(handedOver).padStart(8)}   (an old Node's own start, then the pinned one's)`,
  );
}
const engineArgs = (port: number) => ['engine', '--config', example, '--port', String(port)];
const engineNow = await engineStartMs((port) => now(engineArgs(port)));
const engineBefore = await engineStartMs((port) => before(engineArgs(port)));
row('engine process start to health SERVING', engineNow, `${seconds(engineBefore)} (tsx)`, 400);

const up = await startUp();
try {
  // The example runs one engine, so `up` keeps a warm spare, started once the gateway serves: the kill is measured
  // with it standing by, as it is for as long as `up` runs.
  const spareDeadline = Date.now() + 30_000;
  while (!up.output().includes('standing by as a warm spare')) {
    if (Date.now() > spareDeadline) throw new Error(`no warm spare stood by:\n${up.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const engineGap = await killUnderLoad(up, 'engine', `${up.gateway}/courses/api/Course`);
  row('engine killed under load (one engine): errors for', engineGap, '3 s (4374c25)', 500);
  const serviceGap = await killUnderLoad(
    up,
    'service',
    `${up.gateway}/.well-known/oauth-authorization-server`,
  );
  row('service killed under load: OAuth/MCP back after', serviceGap, '5.5–8.3 s (4374c25)', 1000);
} finally {
  await stopUp(up);
}

if (process.env.BENCH_FRESH_CLONE === '1') {
  row(
    'npm start on a fresh clone to "Portcullis is up."',
    await freshCloneStartMs(),
    '~40 s (4374c25)',
    40_000,
  );
} else {
  console.log(
    '  npm start on a fresh clone: BENCH_FRESH_CLONE=1 measures it (a clone, npm install, Envoy, Node)',
  );
}
