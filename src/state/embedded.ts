import path from 'node:path';
import type * as Lmdb from 'lmdb';
import type { Database, RootDatabase } from 'lmdb';
import { lazyPackage } from './lazy-package.js';
import { maxEmbeddedStreams } from './options.js';
import { makeFilePrivate, makePrivateDirectory } from './private-files.js';

/** lmdb, loaded when a store is first opened (lazy-package.ts). */
const lmdb = lazyPackage<typeof Lmdb>('lmdb');

/**
 * The embedded durable store of a single machine (`state.dataDir`): one LMDB environment that every process of the
 * gateway on this machine opens (engines and the Koa service alike; LMDB serialises their writers and lets readers
 * run beside them), with one named database per kind of record. A write's promise settles once LMDB has committed
 * it (visible to every process, and kept if this process is SIGKILLed: the pages are the kernel's by then); LMDB
 * flushes to the disk after the commit (`overlappingSync`), so a write that must also survive a power loss is
 * awaited through durable().
 */
export interface EmbeddedState {
  /** The named database `name` (created on first use), keys are strings, values structured-cloned by msgpack. */
  database<V>(name: string): Database<V, string>;
  /**
   * Settles with `write`'s result once the write is committed and flushed to the disk: await it before a
   * response that depends on the write. Writes committed together share one flush.
   */
  durable<T>(write: Promise<T>): Promise<T>;
  /**
   * A consistent copy of the whole environment into `directory` (which must exist), as its `data.mdb`: a data
   * directory of its own. Taken under a read transaction, so other processes keep writing meanwhile.
   */
  backup(directory: string): Promise<void>;
  /**
   * The named database `name` of the companion environment `<dataDir>/unsynced`, whose commits are not flushed to
   * disk (LMDB's noSync): a commit costs microseconds instead of milliseconds, and what it wrote outlives the
   * process, even one killed (the operating system holds the pages), but not a crash of the machine. For records
   * on the request path that only matter for minutes (rate-limit windows, concurrency leases).
   */
  unsyncedDatabase<V>(name: string): Database<V, string>;
  close(): Promise<void>;
}

/** How many named databases one environment may hold: auth records and counters, and one per event stream. */
const maxDatabases = 32 + maxEmbeddedStreams;

/** The files of one LMDB environment in its directory. */
const ENVIRONMENT_FILES = ['data.mdb', 'lock.mdb'];

/**
 * Opens (creating) the LMDB environment in `directory` readable by this user only: the store holds tokens,
 * sessions and what every client did. lmdb-js passes `permissionsMode` (not in its types) to mdb_env_open, which
 * otherwise creates both files 0664 less the umask; files an older version made are tightened too.
 */
function openPrivateEnvironment(directory: string, options: { noSync?: boolean }): RootDatabase {
  makePrivateDirectory(directory);
  const mode = { permissionsMode: 0o600 };
  // noSubdir: false, or lmdb-js takes a directory whose name has a dot (`state.v1`) for the database file itself.
  const root = lmdb().open({ path: directory, maxDbs: maxDatabases, noSubdir: false, ...options, ...mode });
  for (const file of ENVIRONMENT_FILES) makeFilePrivate(path.join(directory, file));
  return root;
}

export function openEmbeddedState(directory: string): EmbeddedState {
  const root = openPrivateEnvironment(directory, {});
  const databases = new Map<string, Database<unknown, string>>();
  let unsyncedRoot: RootDatabase | undefined;
  const unsyncedDatabases = new Map<string, Database<unknown, string>>();
  return {
    database<V>(name: string) {
      let database = databases.get(name);
      if (database === undefined) {
        database = root.openDB<unknown, string>({ name });
        databases.set(name, database);
      }
      return database as Database<V, string>;
    },
    async durable<T>(write: Promise<T>) {
      const result = await write;
      await root.flushed;
      return result;
    },
    async backup(target: string) {
      await root.backup(target, false);
      // mdb_env_copy creates the copy 0666 less the umask.
      makeFilePrivate(path.join(target, 'data.mdb'));
    },
    unsyncedDatabase<V>(name: string) {
      let database = unsyncedDatabases.get(name);
      if (database === undefined) {
        unsyncedRoot ??= openPrivateEnvironment(path.join(directory, 'unsynced'), { noSync: true });
        database = unsyncedRoot.openDB<unknown, string>({ name });
        unsyncedDatabases.set(name, database);
      }
      return database as Database<V, string>;
    },
    close: async () => {
      await unsyncedRoot?.close();
      await root.close();
    },
  };
}
