import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddedStores } from '../../../src/auth/stores/embedded.js';
import type { RefreshTokenRecord } from '../../../src/auth/stores/types.js';
import { openEmbeddedState } from '../../../src/state/embedded.js';

/** `portcullis backup`: a consistent copy of the embedded store (and the signing keys) while it is being written. */

const cli = fileURLToPath(new URL('../../../bin/portcullis.js', import.meta.url));

function run(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 25_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const refresh = (id: string, now: number): RefreshTokenRecord => ({
  id,
  grantId: 'g',
  clientId: 'c',
  sub: 'alice',
  scope: ['read:courses-work'],
  resource: 'r',
  issuedAt: now,
  expiresAt: now + 3600,
  consumed: false,
});

describe('portcullis backup', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'portcullis-backup-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('copies the store while another process writes to it, and the signing keys', async () => {
    const config = path.join(directory, 'gateway.yaml');
    await writeFile(
      config,
      'products: [{ id: courses }]\nstate: { dataDir: data/state }\n' +
        'auth: { issuer: "http://127.0.0.1:8080", baseUrl: "http://127.0.0.1:8080", dataDir: data/auth }\n',
    );
    await mkdir(path.join(directory, 'data/auth'), { recursive: true });
    await writeFile(path.join(directory, 'data/auth/signing-keys.json'), '[{"kid":"k"}]\n', { mode: 0o600 });
    const state = openEmbeddedState(path.join(directory, 'data/state'));
    const stores = createEmbeddedStores(state);
    const now = Math.floor(Date.now() / 1000);
    await stores.refreshTokens.put(refresh('before-the-backup', now));

    // Writes go on while the backup runs (as the service's would).
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing && written < 100_000)
        await stores.refreshTokens.put(refresh(`during-${written++}`, now));
    })();
    const target = path.join(directory, 'copy');
    const outcome = await run(['backup', '--config', config, '--to', target]);
    writing = false;
    await writer;
    expect(written).toBeGreaterThan(0);
    await stores.close();
    await state.close();
    expect(outcome).toMatchObject({ status: 0, stderr: '' });
    expect(outcome.stdout).toContain(`-> ${path.join(target, 'state', 'data.mdb')}`);

    // The copy is a data directory of its own: it opens, and has what was there before the backup.
    const copy = openEmbeddedState(path.join(target, 'state'));
    try {
      const restored = createEmbeddedStores(copy);
      expect((await restored.refreshTokens.find('before-the-backup'))?.sub).toBe('alice');
      await restored.close();
    } finally {
      await copy.close();
    }
    expect(await readFile(path.join(target, 'auth/signing-keys.json'), 'utf8')).toBe('[{"kid":"k"}]\n');
    expect((await stat(path.join(target, 'auth/signing-keys.json'))).mode & 0o777).toBe(0o600);

    // Never over an earlier backup.
    const again = await run(['backup', '--config', config, '--to', target]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`${target} is not empty: back up into a new directory`);
  });

  it('says there is nothing to back up without state.dataDir', async () => {
    const config = path.join(directory, 'no-state.yaml');
    await writeFile(config, 'products: [{ id: courses }]\n');
    const outcome = await run(['backup', '--config', config, '--to', path.join(directory, 'nothing')]);
    expect(outcome.status).toBe(1);
    expect(outcome.stderr).toContain(
      `${config}: state.dataDir is not set, so nothing is kept on this machine`,
    );
  });
});
