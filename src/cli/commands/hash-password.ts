import { parseArgs } from 'node:util';
import { hashPassword } from '../../auth/index.js';
import { type CliCommand, UsageError } from '../command.js';

/** Reads all of standard input (a piped password, so it stays out of the shell history and `ps`). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

export const command: CliCommand = {
  usage: 'portcullis hash-password < password-file   (or: printf %s "$PASSWORD" | portcullis hash-password)',
  async run(args) {
    parseArgs({ args: [...args], options: {} });
    if (process.stdin.isTTY) {
      throw new UsageError('pipe the password on standard input (it is never taken as an argument)');
    }
    // One trailing newline is what `echo` and most editors add; it is not part of the password.
    const password = (await readStdin()).replace(/\r?\n$/, '');
    if (password === '') throw new UsageError('the password on standard input is empty');
    console.log(await hashPassword(password));
    return 0;
  },
};
