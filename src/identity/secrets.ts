import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { IdentityError } from './errors.js';
import type { SecretValue } from './options.js';

/**
 * A secret's value, read when a token is fetched (not at start): a rotated file or a changed variable takes effect at
 * the next fetch. The error names where it looked, never what it found.
 */
export async function readSecret(value: SecretValue, directory: string, what: string): Promise<string> {
  if (typeof value === 'string') return value;
  if ('env' in value) {
    const found = process.env[value.env];
    if (found === undefined || found === '')
      throw new IdentityError('unavailable', `${what}: the environment variable ${value.env} is not set`);
    return found;
  }
  const file = path.resolve(directory, value.file);
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    throw new IdentityError(
      'unavailable',
      `${what}: cannot read ${file} (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}
