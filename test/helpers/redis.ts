import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/config/plan.js';
import { until } from './wait.js';

export interface RunningRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the server (the port stays reserved for `start`). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence). */
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT: a Redis that accepts connections but never answers. */
  pause(): void;
  resume(): void;
  /** Stops the server for good and removes its directory. */
  close(): Promise<void>;
  /** Runs redis-cli against this server and returns its output (XRANGE checks and the like). */
  cli(...args: string[]): string;
}

const INSTALL_HINT =
  'redis-server is not installed; install it with `apt-get install -y redis-server` (.ci/run does this on CI)';

function findBinary(name: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const binary = found.stdout.trim();
  if (found.status !== 0 || binary === '') throw new Error(INSTALL_HINT);
  return binary;
}

async function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/**
 * A real redis-server on a free loopback port in a temporary directory, without persistence. A missing
 * redis-server fails the test with the install hint (never a skip).
 */
export async function startRedis(): Promise<RunningRedis> {
  const server = findBinary('redis-server');
  const client = findBinary('redis-cli');
  const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const start = async () => {
    output = '';
    child = spawn(
      server,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        directory,
        '--save',
        '',
        '--appendonly',
        'no',
        '--protected-mode',
        'yes',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const spawned = child;
    await until(
      async () => {
        if (spawned.exitCode !== null)
          throw new Error(`redis-server exited with ${spawned.exitCode}:\n${output}`);
        return listening(port);
      },
      'redis-server to listen',
      { timeoutMs: 10_000, everyMs: 20, detail: () => output },
    );
  };

  const stop = async () => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    running.kill('SIGCONT');
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill('SIGKILL');
    await exited;
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    async close() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    cli(...args) {
      const result = spawnSync(client, ['-p', String(port), ...args], { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`redis-cli ${args.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
  };
}
