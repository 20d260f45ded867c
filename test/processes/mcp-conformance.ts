import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The official MCP conformance suite's CLI (`@modelcontextprotocol/conformance`, pinned in package.json). */
export const CONFORMANCE_CLI = path.join(
  root,
  'node_modules',
  '@modelcontextprotocol',
  'conformance',
  'dist',
  'index.js',
);

/**
 * The suite's `latest` release, installed beside the alpha under an npm alias (package.json): issue #35 found its
 * `server-sse-multiple-streams` failing on a session-era rule the alpha no longer checks the same way.
 */
export const CONFORMANCE_LATEST_CLI = path.join(
  root,
  'node_modules',
  'mcp-conformance-0.1.16',
  'dist',
  'index.js',
);

/** One check of a scenario, as the suite writes it in its `checks.json`. */
export interface ConformanceCheck {
  readonly id: string;
  readonly name: string;
  readonly status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  readonly errorMessage?: string;
  readonly details?: Record<string, unknown>;
}

/** What the suite printed when asked for `args` (`list`, say), on the project's own Node (it needs Node ≥ 22). */
export async function conformanceOutput(args: readonly string[]): Promise<string> {
  return (await promisify(execFile)(process.execPath, [CONFORMANCE_CLI, ...args])).stdout;
}

/**
 * Runs one scenario of the suite (`args`: its mode, target and scenario options) with its results written into a new
 * folder of `output` named from `folder`, and reads the checks of the run whose folder it wrote starts with
 * `written` (`server-<scenario>-`, say): undefined when it wrote none. A non-zero exit is the suite's verdict, not an
 * error; `suite` is the CLI of another release.
 */
export async function runConformance(options: {
  readonly args: readonly string[];
  readonly output: string;
  readonly folder: string;
  readonly written: string;
  readonly timeoutMs: number;
  readonly suite?: string;
}): Promise<{ checks: ConformanceCheck[] | undefined; exitCode: number; stdout: string }> {
  const directory = await mkdtemp(path.join(options.output, options.folder));
  const args = [options.suite ?? CONFORMANCE_CLI, ...options.args, '-o', directory];
  const { exitCode, stdout } = await promisify(execFile)(process.execPath, args, {
    timeout: options.timeoutMs,
  }).then(
    ({ stdout }) => ({ exitCode: 0, stdout }),
    (error: { code?: number; stdout?: string; stderr?: string }) => {
      if (typeof error.code !== 'number') throw error;
      return { exitCode: error.code, stdout: `${error.stdout ?? ''}${error.stderr ?? ''}` };
    },
  );
  const run = (await readdir(directory)).find((name) => name.startsWith(options.written));
  const checks =
    run === undefined
      ? undefined
      : (JSON.parse(await readFile(path.join(directory, run, 'checks.json'), 'utf8')) as ConformanceCheck[]);
  return { checks, exitCode, stdout };
}
