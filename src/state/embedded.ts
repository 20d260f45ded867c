import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Database, open, type RootDatabase } from 'lmdb';

/**
 * The embedded durable store of a single machine (`state.dataDir`): one LMDB environment that every process of the
 * gateway on this machine opens (engines and the Koa service alike; LMDB serialises their writers and lets readers
 * run beside them), with one named database per kind of record. A write's promise settles once LMDB has committed
 * it to disk, so a caller that awaits it before answering loses nothing the client was told, even on SIGKILL.
 */
export interface EmbeddedState {
  /** The named database `name` (created on first use), keys are strings, values structured-cloned by msgpack. */
  database<V>(name: string): Database<V, string>;
  /**
   * The named database `name` of the companion environment `<dataDir>/unsynced`, whose commits are not flushed to
   * disk (LMDB's noSync): a commit costs microseconds instead of milliseconds, and what it wrote outlives the
   * process, even one killed (the operating system holds the pages), but not a crash of the machine. For records
   * on the request path that only matter for minutes (rate-limit windows, concurrency leases).
   */
  unsyncedDatabase<V>(name: string): Database<V, string>;
  close(): Promise<void>;
}

/** How many named databases one environment may hold (auth records, counters, event streams, …). */
const maxDatabases = 32;

export function openEmbeddedState(directory: string): EmbeddedState {
  mkdirSync(directory, { recursive: true });
  const root: RootDatabase = open({ path: directory, maxDbs: maxDatabases });
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
    unsyncedDatabase<V>(name: string) {
      let database = unsyncedDatabases.get(name);
      if (database === undefined) {
        const unsyncedDirectory = path.join(directory, 'unsynced');
        mkdirSync(unsyncedDirectory, { recursive: true });
        unsyncedRoot ??= open({ path: unsyncedDirectory, maxDbs: maxDatabases, noSync: true });
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
