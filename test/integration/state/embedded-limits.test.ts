import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openEmbeddedState } from '../../../src/state/embedded.js';
import { EmbeddedLimitStore } from '../../../src/state/embedded-limits.js';
import { type QuotaRequest, StateUnavailableError } from '../../../src/state/limits.js';

const WORKER = fileURLToPath(new URL('../../processes/quota-worker.ts', import.meta.url));

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'portcullis-embedded-limits-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const monthly = (key: string): QuotaRequest => ({
  key,
  periodSeconds: 30 * 86_400,
  originMs: Date.UTC(2025, 0, 1),
  callLimit: 3,
  kilobyteLimit: undefined,
  calls: 1,
  bytes: 0,
  mode: 'consume',
});

/** Runs the quota worker as its own process; resolves with the calls it was admitted. */
function worker(key: string, calls: number, limit: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', WORKER, directory, key, String(calls), String(limit)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(Number(output.trim())) : reject(new Error(`quota worker exited with ${code}`)),
    );
  });
}

describe('embedded limit store', () => {
  it('keeps quota counts, windows and leases when the store is closed and opened again (a restart)', async () => {
    const first = openEmbeddedState(directory);
    const before = new EmbeddedLimitStore(first);
    expect((await before.quota(monthly('q'))).allowed).toBe(true);
    expect((await before.quota(monthly('q'))).allowed).toBe(true);
    await before.slidingWindow({ key: 'w', limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' });
    const lease = await before.acquire('c', 1, 60);
    await first.close();

    const second = openEmbeddedState(directory);
    const after = new EmbeddedLimitStore(second);
    expect(await after.quota(monthly('q'))).toMatchObject({ allowed: true, calls: 3 });
    expect(await after.quota(monthly('q'))).toMatchObject({ allowed: false, exceeded: 'calls' });
    expect(
      (await after.slidingWindow({ key: 'w', limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' }))
        .allowed,
    ).toBe(false);
    expect(await after.acquire('c', 1, 60)).toBeUndefined();
    await after.release(lease!);
    expect(await after.acquire('c', 1, 60)).toBeDefined();
    await second.close();
  });

  it('three processes on one data directory admit exactly the limit between them', async () => {
    const admitted = await Promise.all([
      worker('shared', 30, 50),
      worker('shared', 30, 50),
      worker('shared', 30, 50),
    ]);
    expect(admitted.reduce((sum, n) => sum + n, 0)).toBe(50);
    const state = openEmbeddedState(directory);
    expect(
      await new EmbeddedLimitStore(state).quota({
        ...monthly('shared'),
        periodSeconds: 0,
        originMs: 0,
        callLimit: 50,
        mode: 'check',
      }),
    ).toMatchObject({ calls: 50, allowed: false });
    await state.close();
  });

  it('sweeps expired windows, quotas and leases, and keeps the live ones', async () => {
    let now = Date.UTC(2025, 0, 1);
    const state = openEmbeddedState(directory);
    const store = new EmbeddedLimitStore(state, () => now);
    for (let i = 0; i < 5; i++) {
      await store.slidingWindow({ key: `old-${i}`, limit: 9, periodSeconds: 1, amount: 1, mode: 'consume' });
      await store.acquire(`lease-${i}`, 1, 1);
      await store.quota({ ...monthly(`quota-${i}`), periodSeconds: 300, originMs: 0 });
    }
    await store.quota({ ...monthly('forever'), periodSeconds: 0 });
    now += 301_000;
    await store.slidingWindow({ key: 'live', limit: 9, periodSeconds: 60, amount: 1, mode: 'consume' });
    await store.sweep();
    expect([...state.unsyncedDatabase('limit-windows').getKeys()]).toEqual(['live']);
    expect(state.unsyncedDatabase('limit-slots').getKeysCount()).toBe(0);
    expect([...state.database('limit-quotas').getKeys()]).toEqual(['forever']);
    await state.close();
  });

  it('a store that cannot write says the state is unavailable', async () => {
    const state = openEmbeddedState(directory);
    const store = new EmbeddedLimitStore(state);
    await state.close();
    const failure = await store
      .slidingWindow({ key: 'k', limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(StateUnavailableError);
  });
});
