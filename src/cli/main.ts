import { EnvoyNotFoundError } from '../../envoy/binary.js';
import { GatewayLoadError } from '../config/gateway.js';
import { ConfigError } from '../config/load.js';
import { UsageError } from './command.js';
import { commands } from './commands/index.js';

function help(): string {
  const width = Math.max(...commands.map((command) => command.name.length));
  return [
    'usage: portcullis COMMAND [options]',
    '',
    ...commands.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`),
    '',
    'portcullis COMMAND --help shows the options of a command.',
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(help());
    return name ? 0 : 2;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    console.error(`portcullis: unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: ${command.usage}`);
    return 0;
  }
  try {
    return await command.run(args);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof TypeError && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'))
    ) {
      console.error(`portcullis ${name}: ${error.message}\nusage: ${command.usage}`);
      return 2;
    }
    if (
      error instanceof ConfigError ||
      error instanceof GatewayLoadError ||
      error instanceof EnvoyNotFoundError
    ) {
      console.error(error.message);
      return 1;
    }
    throw error;
  }
}

process.exitCode = await main(process.argv.slice(2));
