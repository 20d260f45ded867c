/**
 * One `portcullis` sub-command. Each lives in its own file under `commands/` and is listed in
 * `commands/index.ts`; the dispatcher in `main.ts` knows nothing else about them.
 */
export interface CliCommand {
  /** The word after `portcullis`, e.g. `validate`. */
  readonly name: string;
  /** One line for `portcullis --help`. */
  readonly summary: string;
  /** Usage text printed for `portcullis NAME --help` and on a usage error. */
  readonly usage: string;
  /** Runs the command with the arguments after its name; resolves to the process exit code. */
  run(args: readonly string[]): Promise<number>;
}

/** A usage mistake: the dispatcher prints the message and the command's usage, and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
