import { differencesMarkdown } from '../../policy/differences.js';
import { type CliCommand, UsageError } from '../command.js';

export const command: CliCommand = {
  usage: 'portcullis differences   (docs/differences.md is its output)',
  async run(args) {
    if (args.length > 0) throw new UsageError(`differences takes no arguments, got "${args.join(' ')}"`);
    process.stdout.write(differencesMarkdown());
    return 0;
  },
};
