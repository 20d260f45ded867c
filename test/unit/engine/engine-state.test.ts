import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type EngineState, EngineStateKeeper, stateSignature } from '../../../src/engine/engine-state.js';
import { EmbeddedLimitStore } from '../../../src/state/embedded-limits.js';

/** The embedded store a state opened (its state section has dataDir). */
function embeddedStore(state: EngineState) {
  if (state.backend.kind !== 'embedded')
    throw new Error(`expected the embedded store, got ${state.backend.kind}`);
  return state.backend.store;
}

describe('EngineStateKeeper', () => {
  it('hands every generation with the same state section the same caches and counters', async () => {
    const keeper = new EngineStateKeeper();
    const first = keeper.hold({ cache: { internalBytes: 4096, maxEntryBytes: 1024 } }, '/config');
    await first.state.values.set('k', { value: 'kept' }, 60);
    const second = keeper.hold({ cache: { internalBytes: 4096, maxEntryBytes: 1024 } }, '/config');
    await first.release();
    expect(second.state).toBe(first.state);
    expect(await second.state.values.get('k')).toEqual({ value: 'kept' });
    await second.release();
    await keeper.close();
  });

  it('opens a new state when the state section changed, and closes the old one with its last generation', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-keeper-'));
    const keeper = new EngineStateKeeper();
    const first = keeper.hold({ dataDir: 'one' }, directory);
    expect(first.state.backend.kind).toBe('embedded');
    const second = keeper.hold({ dataDir: 'two' }, directory);
    expect(second.state).not.toBe(first.state);
    expect(keeper.current).toBe(second.state);
    // Still open while a request of the first generation runs.
    await first.state.limits.slidingWindow({
      key: 'k',
      limit: 1,
      periodSeconds: 60,
      amount: 1,
      mode: 'consume',
    });
    await first.release();
    const closed = await new EmbeddedLimitStore(embeddedStore(first.state))
      .slidingWindow({ key: 'k', limit: 1, periodSeconds: 60, amount: 1, mode: 'consume' })
      .catch((error: unknown) => error);
    expect(closed).toBeInstanceOf(Error);
    await second.release();
    await keeper.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('knows dataDir by the folder it names, relative to the configuration file', () => {
    expect(stateSignature({ dataDir: 'state' }, '/etc/portcullis')).toBe(
      stateSignature({ dataDir: '/etc/portcullis/state' }, '/elsewhere'),
    );
    expect(stateSignature({ dataDir: 'state' }, '/a')).not.toBe(stateSignature({ dataDir: 'state' }, '/b'));
  });
});
