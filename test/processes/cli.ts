import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../bin/portcullis.js', import.meta.url));

export interface CliOutcome {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly cwd?: string;
  /** Added to the test's environment. */
  readonly env?: NodeJS.ProcessEnv;
  /** Written to standard input, which is then closed (without it, standard input is closed at once). */
  readonly input?: string;
}

/**
 * Each start of the command is CPU-bound (tsx loads every source of the CLI), so more of them at once than the
 * machine has cores only makes each slower: a test file that runs its cases side by side queues them here.
 */
const slots = pool(availableParallelism());

/**
 * Runs the real `portcullis` command, as a user would, and resolves with its exit status and output. Bounded by a
 * timeout (counted from the spawn, not from the wait for a slot) so a command that waits for input fails instead.
 */
export function runCli(args: readonly string[], options: CliOptions = {}): Promise<CliOutcome> {
  return slots(
    () =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [cli, ...args], {
          ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
          env: { ...process.env, PORTCULLIS_DEBUG: '', ...options.env },
          stdio: ['pipe', 'pipe', 'pipe'],
          timeout: 25_000,
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
        child.on('close', (status) => resolve({ status, stdout, stderr }));
        child.stdin.end(options.input ?? '');
      }),
  );
}

/** Runs the tasks given to it at most `size` at a time, in the order they came. */
function pool(size: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next task in line, or free it.
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  };
}
