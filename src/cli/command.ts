/**
 * One `portcullis` sub-command. Each lives in its own file under `commands/` and is listed, with its name and
 * summary, in `commands/index.ts`; the dispatcher in `main.ts` knows nothing else about them.
 */
export interface CliCommand {
  /** Usage text printed for `portcullis NAME --help` and on a usage error. */
  readonly usage: string;
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(args: readonly string[]): Promise<number>;
}

/** A usage mistake: the dispatcher prints the message in one line, pointing at the command's --help, and exits 1. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Input that cannot be used (a file that cannot be read): the dispatcher prints the message in one line, exits 1. */
export class InputError extends Error {
  override readonly name = 'InputError';
}
