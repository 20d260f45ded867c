import { describe, expect, it } from 'vitest';
import { InProcessSessionStore } from '../../../src/mcp/transport/sessions.js';

const alice = { sub: 'alice', clientId: 'c1' };
const bob = { sub: 'bob', clientId: 'c1' };

describe('in-process session store', () => {
  it('keeps the revision and owner of a session; initialized is written through', async () => {
    const store = new InProcessSessionStore();
    const s = await store.create('2025-11-25', alice);
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(await store.find(s.id)).toEqual({
      id: s.id,
      revision: '2025-11-25',
      ...alice,
      initialized: false,
    });
    await store.markInitialized(s.id);
    expect((await store.find(s.id))?.initialized).toBe(true);
    expect(store.size).toBe(1);
  });

  it('caps sessions per user: the oldest goes, other users keep theirs (also after markInitialized)', async () => {
    const store = new InProcessSessionStore({ maxSessionsPerSubject: 2 });
    const b = await store.create('2025-11-25', bob);
    const a1 = await store.create('2025-11-25', alice);
    await store.markInitialized(a1.id);
    const a2 = await store.create('2025-11-25', alice);
    const a3 = await store.create('2025-11-25', alice);
    const alive = await Promise.all([a1, a2, a3, b].map(async (s) => (await store.find(s.id)) !== undefined));
    expect(alive).toEqual([false, true, true, true]);
    expect(store.size).toBe(3);
  });

  it('deletes a session', async () => {
    const store = new InProcessSessionStore();
    const s = await store.create('2025-11-25', alice);
    await store.delete(s.id);
    expect(await store.find(s.id)).toBeUndefined();
  });

  it('hands out at most `limit` request slots per session; a slot released twice counts once', async () => {
    const store = new InProcessSessionStore();
    const first = await store.acquire('s', 2);
    const second = await store.acquire('s', 2);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(await store.acquire('s', 2)).toBeUndefined();
    expect(await store.acquire('other', 2)).toBeDefined();
    first!();
    first!();
    expect(await store.acquire('s', 2)).toBeDefined();
    expect(await store.acquire('s', 2)).toBeUndefined();
  });

  it('logs notifications in order, once per fingerprint in a row, and reads after a resume point', async () => {
    const { notifications } = new InProcessSessionStore();
    expect(await notifications.read(undefined, 10)).toEqual({ entries: [], newest: '0-0' });
    const one = await notifications.append('notifications/tools/list_changed', 'v1');
    expect(await notifications.append('notifications/tools/list_changed', 'v1')).toBe(one);
    const two = await notifications.append('notifications/tools/list_changed', 'v2');
    const method = 'notifications/tools/list_changed';
    expect(await notifications.read('0-0', 10)).toEqual({
      entries: [
        { id: one, method },
        { id: two, method },
      ],
      newest: two,
    });
    expect(await notifications.read(one, 10)).toEqual({ entries: [{ id: two, method }], newest: two });
    expect(await notifications.read(two, 10)).toEqual({ entries: [], newest: two });
  });
});
