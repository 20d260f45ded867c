import { copyFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfigFile } from '../../config/load.js';
import { openEmbeddedState } from '../../state/embedded.js';
import { makePrivateDirectory } from '../../state/private-files.js';
import { type CliCommand, InputError, UsageError } from '../command.js';

/** The files of auth.dataDir worth keeping: the generated signing keys (and registrations not yet imported). */
const AUTH_FILES = ['signing-keys.json', 'clients.json'];

/**
 * Copies what a single machine keeps across restarts while the gateway runs: a consistent snapshot of the
 * embedded store of state.dataDir (LMDB's own copy under a read transaction, so writers in other processes go
 * on) and the files of auth.dataDir. The store's files are in lmdb-js's format (its LMDB fork), which the
 * `mdb_copy` of distributions' lmdb-utils does not read: this command is the way to copy them.
 */
export const command: CliCommand = {
  usage:
    'portcullis backup --config FILE --to DIR\n' +
    '  writes DIR/state/data.mdb and DIR/auth/*.json; restore by copying them into state.dataDir and auth.dataDir\n' +
    '  while the gateway is stopped',
  async run(args) {
    const { values } = parseArgs({
      args: [...args],
      options: { config: { type: 'string' }, to: { type: 'string' } },
    });
    if (!values.config) throw new UsageError('--config is required');
    if (!values.to) throw new UsageError('--to is required');
    const { config, directory } = await loadConfigFile(values.config);
    if (config.state.dataDir === undefined) {
      throw new UsageError(
        `${values.config}: state.dataDir is not set, so nothing is kept on this machine` +
          (config.state.redis ? ' (state.redis keeps the state: back up Redis)' : ''),
      );
    }
    const dataDir = path.resolve(directory, config.state.dataDir);
    if (!(await readdir(dataDir).catch((): string[] => [])).includes('data.mdb'))
      throw new InputError(`${dataDir}: no store here yet (state.dataDir holds no data.mdb)`);
    const target = path.resolve(values.to);
    if ((await readdir(target).catch((): string[] => [])).length > 0)
      throw new UsageError(`${target} is not empty: back up into a new directory`);

    makePrivateDirectory(path.join(target, 'state'));
    const state = openEmbeddedState(dataDir);
    try {
      await state.backup(path.join(target, 'state'));
    } finally {
      await state.close();
    }
    console.log(`state.dataDir ${dataDir} -> ${path.join(target, 'state', 'data.mdb')}`);

    const authDir = config.auth?.dataDir && path.resolve(directory, config.auth.dataDir);
    if (authDir) {
      const present = new Set(await readdir(authDir).catch((): string[] => []));
      const files = AUTH_FILES.filter((file) => present.has(file));
      if (files.length > 0) makePrivateDirectory(path.join(target, 'auth'));
      for (const file of files) {
        // Private keys: the copy is as private as the original (mode 0600 is kept by copyFile).
        await copyFile(path.join(authDir, file), path.join(target, 'auth', file));
        console.log(`auth.dataDir ${path.join(authDir, file)} -> ${path.join(target, 'auth', file)}`);
      }
    }
    return 0;
  },
};
