import { type ChildProcess, spawn } from 'node:child_process';
import { until } from './wait.js';

/** A process a test started, its output collected as it comes. */
export interface RunningChild {
  readonly child: ChildProcess;
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Starts `command` and waits until `ready` says it is (or fails with its output if it exits or takes longer than
 * `timeoutMs`).
 */
export async function startChild(
  command: string,
  args: readonly string[],
  options: {
    readonly cwd?: string;
    readonly env?: NodeJS.ProcessEnv;
    readonly ready: (output: string) => boolean | Promise<boolean>;
    readonly what: string;
    readonly timeoutMs?: number;
  },
): Promise<RunningChild> {
  const child = spawn(command, [...args], {
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const stop = (graceMs = 7000) => stopProcess(child, graceMs);
  try {
    await until(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`${options.what} exited with ${child.exitCode}:\n${output}`);
        return options.ready(output);
      },
      options.what,
      { timeoutMs: options.timeoutMs ?? 30_000, detail: () => output },
    );
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { child, output: () => output, stop };
}

/**
 * SIGTERM, then SIGKILL if `child` has not exited within `graceMs`; resolves once it has exited. The grace is a
 * deadline, not a wait: a process that stops at once is done at once.
 */
export async function stopProcess(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const deadline = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(deadline);
}
