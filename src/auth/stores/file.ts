import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { makeFilePrivate, makePrivateDirectory, unwritableDirectory } from '../../state/private-files.js';
import type { ClientRecord, ClientStore } from './types.js';

/**
 * Durable state of a single-machine deployment, kept in a data directory so a restart loses no client
 * registration and no signing key: `clients.json` and `signing-keys.json` (mode 0600). Writes go to a
 * temporary file renamed over the old one, so a crash never leaves a half-written file; writes are
 * serialised through one promise chain.
 */
async function readJson<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${path}: cannot read auth state: ${(err as Error).message}`);
  }
}

async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

export class FileClientStore implements ClientStore {
  #writes: Promise<void> = Promise.resolve();

  private constructor(
    private readonly path: string,
    private readonly clients: Map<string, ClientRecord>,
  ) {}

  static async open(dataDir: string): Promise<FileClientStore> {
    makePrivateDirectory(dataDir);
    const path = join(dataDir, 'clients.json');
    const saved = (await readJson<ClientRecord[]>(path)) ?? [];
    return new FileClientStore(path, new Map(saved.map((c) => [c.clientId, Object.freeze(c)])));
  }

  async get(clientId: string) {
    return this.clients.get(clientId);
  }

  async put(client: ClientRecord) {
    this.clients.set(client.clientId, Object.freeze(structuredClone(client)));
    await this.flush();
  }

  async delete(clientId: string) {
    const existed = this.clients.delete(clientId);
    if (existed) await this.flush();
    return existed;
  }

  private flush(): Promise<void> {
    const snapshot = [...this.clients.values()];
    this.#writes = this.#writes.catch(() => {}).then(() => writeJsonAtomic(this.path, snapshot));
    return this.#writes;
  }
}

/**
 * Moves the registrations of `clients.json` into `clients` (the embedded or Redis store that holds them from now
 * on) and renames the file `clients.json.imported`, so a client deleted later is not imported again at the next
 * start. A client already in the store keeps its stored record. Returns how many were imported.
 */
export async function importClientsFile(dataDir: string, clients: ClientStore): Promise<number> {
  const path = join(dataDir, 'clients.json');
  const saved = await readJson<ClientRecord[]>(path);
  if (saved === undefined) return 0;
  let imported = 0;
  for (const client of saved) {
    if ((await clients.get(client.clientId)) !== undefined) continue;
    await clients.put(client);
    imported += 1;
  }
  await rename(path, `${path}.imported`);
  return imported;
}

export async function loadSigningKeys(dataDir: string): Promise<JWK[] | undefined> {
  const file = join(dataDir, 'signing-keys.json');
  const keys = await readJson<JWK[]>(file);
  // A backup restored with a plain `cp` is 0644: the private keys are made private again before use.
  if (keys !== undefined) makeFilePrivate(file);
  return keys;
}

export async function saveSigningKeys(dataDir: string, keys: JWK[]): Promise<void> {
  try {
    makePrivateDirectory(dataDir);
    await writeJsonAtomic(join(dataDir, 'signing-keys.json'), keys);
  } catch (error) {
    throw unwritableDirectory('auth.dataDir', dataDir, error);
  }
}
