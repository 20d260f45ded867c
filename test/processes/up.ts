import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { descendantsOf, isAlive } from './process-tree.js';

const cli = fileURLToPath(new URL('../../bin/portcullis.js', import.meta.url));

/** `portcullis up` running in a test, its output collected as it comes. */
export interface UpRun {
  readonly child: ChildProcess;
  output(): string;
  /** Resolves when the output contains `text`; rejects if the process exits first or after `timeoutMs`. */
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
  /**
   * Stops it as a user would (SIGINT), then kills whatever of its family is left after `timeoutMs`. Resolves with
   * its exit code, or 'timeout'.
   */
  stop(timeoutMs?: number): Promise<number | null | 'timeout'>;
}

/**
 * Starts `portcullis up`; `commandPrefix` (e.g. `ip netns exec <namespace>`) runs it on another host. `logFormat`:
 * how up shows the processes' log lines — `pretty` (`[engine] 12:00:01 INFO  message key=value`, what a person at a
 * terminal sees, and what `saidBy` reads) unless a test reads them as JSON.
 */
export function startUp(
  configFile: string,
  env: NodeJS.ProcessEnv = process.env,
  commandPrefix: readonly string[] = [],
  logFormat: 'pretty' | 'json' = 'pretty',
): UpRun {
  // `ip netns exec` executes the command in its own process, so `child` is still `up` itself.
  const [command, ...args] = [
    ...commandPrefix,
    process.execPath,
    cli,
    'up',
    '--config',
    configFile,
    '--log-format',
    logFormat,
  ];
  const child = spawn(command!, args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const listeners: (() => void)[] = [];
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor(text, timeoutMs = 45_000) {
      return new Promise((resolve, reject) => {
        const check = () => output.includes(text) && resolve();
        listeners.push(check);
        check();
        const timer = setTimeout(
          () => reject(new Error(`no "${text}" within ${timeoutMs} ms:\n${output}`)),
          timeoutMs,
        );
        void exited.then((code) => {
          clearTimeout(timer);
          if (!output.includes(text)) reject(new Error(`exited ${code} before "${text}":\n${output}`));
        });
      });
    },
    async stop(timeoutMs = 20_000) {
      if (child.exitCode !== null) return child.exitCode;
      const family = descendantsOf(child.pid!);
      child.kill('SIGINT');
      const code = await Promise.race([
        exited,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs)),
      ]);
      for (const pid of [child.pid!, ...family]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
      return code;
    },
  };
}

/** The processes of `up`'s family whose command line passes `test`, by pid (one that exited since it was listed is left out). */
export function processesOf(run: UpRun, test: (argv: string[]) => boolean): number[] {
  return descendantsOf(run.child.pid!).filter((pid) => {
    try {
      return test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'));
    } catch {
      return false;
    }
  });
}

/** An Envoy serving a bootstrap (not `envoy --mode validate` checking one). */
export const isEnvoy = (argv: string[]) => argv[0]!.endsWith('/envoy') && argv.includes('-c');

/** `portcullis <command>`, e.g. an engine or the service `up` started (after Node's flags, if any). */
export const isCli = (command: string) => (argv: string[]) => {
  const at = argv.findIndex((arg) => arg.endsWith('bin/portcullis.js'));
  return at > 0 && argv[at + 1] === command;
};

/**
 * Whether a log line of `process` (`up`, `engine`, `service`, …) shown in the pretty view after offset `from` of
 * `output` contains `text` (a message of several lines continues on the lines after it).
 */
export function saidBy(output: string, process: string, text: string, from = 0): boolean {
  return linesBy(output, process, from).some((line) => line.includes(text));
}

/** How many log lines of `process` contain `text`. */
export function countSaidBy(output: string, process: string, text: string): number {
  return linesBy(output, process).filter((line) => line.includes(text)).length;
}

/** The log lines of `process` in the pretty view, each with its continuation lines. */
function linesBy(output: string, process: string, from = 0): string[] {
  return output
    .slice(from)
    .split(/\n(?! {4})/)
    .filter((line) => line.startsWith(`[${process}] `));
}

/** The URL `up` printed for a role (`gateway`, `https`, `management`, `envoy admin`). */
export function printedUrl(output: string, role: string): string {
  const match = new RegExp(`^  ${role} +(https?://\\S+?)/?(?:\\s|$)`, 'm').exec(output);
  if (!match) throw new Error(`up printed no ${role} URL:\n${output}`);
  return match[1]!;
}
