import { DiagnosticsError } from '../diagnostic.js';
import { EnvoyNotFoundError } from '../envoy/binary.js';
import { PORTCULLIS_VERSION } from '../version.js';
import { InputError, UsageError } from './command.js';
import { commands } from './commands/index.js';
import { stopForClosedOutput } from './signals.js';

function help(): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    'usage: portcullis COMMAND [options]',
    '',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'portcullis COMMAND --help shows the options of a command; portcullis --version, the version.',
  ].join('\n');
}

/** With `PORTCULLIS_DEBUG=1`, a refusal also shows the stack of the error behind it. */
const debug = process.env.PORTCULLIS_DEBUG === '1';

/**
 * Runs one command and resolves to the exit status. Bad input — a usage mistake, an unknown command or option, a
 * file that cannot be read, a document that does not parse — is answered with one line on stderr (a configuration
 * with several problems: one line each, `file:line:col: message`) and status 1, never with a stack trace.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  if (name === '--version' || name === '-V') {
    console.log(`portcullis ${PORTCULLIS_VERSION}`);
    return 0;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return 0;
  }
  if (!name) {
    console.error(help());
    return 1;
  }
  const entry = commands.find((candidate) => candidate.name === name);
  if (!entry) {
    return refuse(`portcullis: unknown command "${name}" (portcullis --help lists them)`);
  }
  const command = await entry.load();
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: ${command.usage}`);
    return 0;
  }
  try {
    return await command.run(args);
  } catch (error) {
    // The command's info lines still gathered (src/log.ts) go first, so the refusal stays the last line. Imported
    // here: `--version` and `--help` load no logger.
    (await import('../log.js')).flushProcessLog();
    return refuse(describeFailure(name, error), error);
  }
}

/** The one line (or one per located problem) that says what was wrong with the input. */
function describeFailure(name: string, error: unknown): string {
  const see = `(portcullis ${name} --help shows the usage)`;
  if (error instanceof UsageError) return `portcullis ${name}: ${error.message} ${see}`;
  if (error instanceof InputError) return `portcullis ${name}: ${error.message}`;
  if (isParseArgsError(error)) {
    // Node's message goes on about positional arguments after its first sentence.
    return `portcullis ${name}: ${firstSentence(error.message)} ${see}`;
  }
  // Located problems (configuration, policies, definitions) are already one `file:line:col: message` line each.
  if (error instanceof DiagnosticsError || error instanceof EnvoyNotFoundError) return error.message;
  const errno = error as NodeJS.ErrnoException;
  if (errno instanceof Error && typeof errno.code === 'string' && typeof errno.path === 'string') {
    return `portcullis ${name}: cannot use ${errno.path} (${errno.code})`;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `portcullis ${name}: ${firstLine(message)}${debug ? '' : ' (PORTCULLIS_DEBUG=1 shows where)'}`;
}

function refuse(message: string, error?: unknown): number {
  console.error(message);
  if (debug && error instanceof Error && error.stack) console.error(error.stack);
  return 1;
}

function isParseArgsError(error: unknown): error is TypeError {
  return error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS');
}

function firstSentence(text: string): string {
  const line = firstLine(text);
  const end = line.indexOf('. ');
  return end < 0 ? line.replace(/\.$/, '') : line.slice(0, end);
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

// A reader that stops early (`portcullis policy-reference --format json | head`) closes the pipe: what is left to
// print has nowhere to go, which is the reader's choice, not a failure. Quietly, as `cat` or `grep` do, for every
// command; any other write error still fails loudly.
let outputClosed = false;
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  // Once the reader is gone, every later write fails too (EPIPE, or the stream destroyed): nothing more to do.
  if (outputClosed) return;
  if (error.code !== 'EPIPE') throw error;
  outputClosed = true;
  // A command that runs until stopped (up) stops as on Ctrl-C, its children with it; any other ends here.
  if (!stopForClosedOutput()) process.exit(0);
});

process.exitCode = await main(process.argv.slice(2));
