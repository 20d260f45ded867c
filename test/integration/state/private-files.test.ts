import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadSigningKeys, saveSigningKeys } from '../../../src/auth/stores/file.js';
import { ensureDevelopmentCertificate } from '../../../src/config/development-certificate.js';
import { openEmbeddedState } from '../../../src/state/embedded.js';
import { unwritableDirectory } from '../../../src/state/private-files.js';

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

/**
 * What the gateway keeps on disk is readable by its own user only: the embedded store (tokens, sessions, counters),
 * the generated signing keys and the development TLS key — files 0600 in directories 0700 — whatever the umask
 * (0 here, the widest) and also when an older version or a plain `cp` left a file 0644.
 */
describe('private files on disk', () => {
  let root: string;
  let umask: number;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'portcullis-modes-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
  beforeEach(() => {
    umask = process.umask(0);
  });
  afterEach(() => {
    process.umask(umask);
  });

  it('the embedded store: data.mdb, lock.mdb and the unsynced environment, and a backup of it', async () => {
    const directory = path.join(root, 'fresh', 'state');
    const state = openEmbeddedState(directory);
    await state.database<number>('records').put('a', 1);
    await state.unsyncedDatabase<number>('counters').put('b', 2);
    const backup = path.join(root, 'backup');
    await mkdir(backup);
    await state.backup(backup);
    await state.close();
    for (const made of [path.join(root, 'fresh'), directory, path.join(directory, 'unsynced')])
      expect({ made, mode: await modeOf(made) }).toEqual({ made, mode: 0o700 });
    for (const file of [
      path.join(directory, 'data.mdb'),
      path.join(directory, 'lock.mdb'),
      path.join(directory, 'unsynced', 'data.mdb'),
      path.join(directory, 'unsynced', 'lock.mdb'),
      path.join(backup, 'data.mdb'),
    ])
      expect({ file, mode: await modeOf(file) }).toEqual({ file, mode: 0o600 });
  });

  it('tightens an environment an older version made 0664', async () => {
    const directory = path.join(root, 'older');
    const older = open({ path: directory });
    await older.put('a', 1);
    await older.close();
    expect(await modeOf(path.join(directory, 'data.mdb'))).toBe(0o664);
    const state = openEmbeddedState(directory);
    await state.close();
    expect(await modeOf(path.join(directory, 'data.mdb'))).toBe(0o600);
    expect(await modeOf(path.join(directory, 'lock.mdb'))).toBe(0o600);
  });

  it('the generated signing keys, and keys restored with a plain cp', async () => {
    const directory = path.join(root, 'auth');
    await saveSigningKeys(directory, [{ kty: 'EC', kid: 'k1' }]);
    expect(await modeOf(directory)).toBe(0o700);
    const file = path.join(directory, 'signing-keys.json');
    expect(await modeOf(file)).toBe(0o600);
    await chmod(file, 0o644);
    expect(await loadSigningKeys(directory)).toEqual([{ kty: 'EC', kid: 'k1' }]);
    expect(await modeOf(file)).toBe(0o600);
  });

  it('the development TLS key and its folder, also when a kept key was 0644', async () => {
    const folder = path.join(root, 'project', '.portcullis', 'tls');
    const files = await ensureDevelopmentCertificate(folder, ['localhost']);
    expect(await modeOf(folder)).toBe(0o700);
    expect(await modeOf(path.join(root, 'project', '.portcullis'))).toBe(0o700);
    expect(await modeOf(files.keyFile)).toBe(0o600);
    await chmod(files.keyFile, 0o644);
    const again = await ensureDevelopmentCertificate(folder, ['localhost']);
    expect(again.keyFile).toBe(files.keyFile);
    expect(await modeOf(files.keyFile)).toBe(0o600);
  });

  it('says which directory refused a write, whose it is and who asked', async () => {
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const parent = path.join(root, 'parent');
    await mkdir(parent, { mode: 0o755 });
    await chmod(parent, 0o750);
    const missing = path.join(parent, 'auth');
    expect((unwritableDirectory('auth.dataDir', missing, denied) as Error).message).toBe(
      `auth.dataDir ${missing} is not writable by this process (EACCES): it does not exist, and ${parent} belongs ` +
        `to uid ${process.getuid!()} (mode 0750), and the process runs as uid ${process.getuid!()}; make the ` +
        'directory writable by that user (in a container image: create it and chown it to the user before USER, so ' +
        'a new volume copies that owner)',
    );
    const other = Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' });
    expect(unwritableDirectory('auth.dataDir', missing, other)).toBe(other);
  });
});
