import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DelegatedTokens,
  embeddedSealedRecords,
  memorySealedRecords,
} from '../../../src/state/delegated-tokens.js';
import { openEmbeddedState } from '../../../src/state/embedded.js';

const SECRET = 'a-shared-secret-of-the-engine-and-service';
const RECORD = { accessToken: 'at-1', refreshToken: 'rt-1', expiresAt: 2_000, obtainedAt: 1_000 };

describe('DelegatedTokens', () => {
  it('reads back what it wrote, sealed: neither the token nor the user is in the stored bytes', async () => {
    const records = memorySealedRecords();
    let stored: Buffer | undefined;
    const spy = {
      get: records.get,
      delete: records.delete,
      set: async (key: string, value: Buffer) => {
        stored = value;
        expect(key).not.toContain('corp|alice');
        await records.set(key, value);
      },
    };
    const tokens = new DelegatedTokens(spy, SECRET);
    await tokens.write('corp|alice', RECORD);
    expect(await tokens.read('corp|alice')).toEqual(RECORD);
    expect(stored!.toString('latin1')).not.toContain('at-1');
    expect(await tokens.read('corp|bob')).toBeUndefined();
  });

  it('opens nothing under another key, nor a record moved to another user', async () => {
    const records = memorySealedRecords();
    await new DelegatedTokens(records, SECRET).write('corp|alice', RECORD);
    expect(await new DelegatedTokens(records, 'another-secret-entirely').read('corp|alice')).toBeUndefined();
    const tokens = new DelegatedTokens(
      {
        // Every key answers alice's record: bob's read must not open it.
        get: async () => records.get(createHash('sha256').update('corp|alice').digest('base64url')),
        set: records.set,
        delete: records.delete,
      },
      SECRET,
    );
    expect(await tokens.read('corp|bob')).toBeUndefined();
  });

  it('refuses a short key', () => {
    expect(() => new DelegatedTokens(memorySealedRecords(), 'short')).toThrow(/at least 16/);
  });

  it('shares records between two openings of one data directory (the service and an engine)', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'portcullis-delegated-'));
    const writer = openEmbeddedState(directory);
    const reader = openEmbeddedState(directory);
    try {
      await new DelegatedTokens(embeddedSealedRecords(writer), SECRET).write('corp|alice', RECORD);
      expect(await new DelegatedTokens(embeddedSealedRecords(reader), SECRET).read('corp|alice')).toEqual(
        RECORD,
      );
      // Removed by the service (the user's grant ended): gone for the engine too.
      await new DelegatedTokens(embeddedSealedRecords(writer), SECRET).remove('corp|alice');
      expect(
        await new DelegatedTokens(embeddedSealedRecords(reader), SECRET).read('corp|alice'),
      ).toBeUndefined();
    } finally {
      await writer.close();
      await reader.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});
