import { describe, expect, it } from 'vitest';
import { findRevision } from '../../../src/mcp/protocol/revisions.js';
import { SessionStore } from '../../../src/mcp/transport/sessions.js';
import { SseStream } from '../../../src/mcp/transport/sse.js';

const revision = findRevision('2025-11-25')!;
const alice = { sub: 'alice', clientId: 'c1', scopes: [] };
const bob = { sub: 'bob', clientId: 'c1', scopes: [] };

describe('session store', () => {
  it('binds a session to its user and client', () => {
    const store = new SessionStore();
    const s = store.create(revision, alice);
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(store.find(s.id, alice)).toBe(s);
    expect(store.find(s.id, bob)).toBeUndefined();
    expect(store.find(s.id, { ...alice, clientId: 'c2' })).toBeUndefined();
  });

  it('caps sessions per user: the oldest goes, other users keep theirs', () => {
    const store = new SessionStore({ maxSessionsPerSubject: 2 });
    const b = store.create(revision, bob);
    const [a1, a2, a3] = [
      store.create(revision, alice),
      store.create(revision, alice),
      store.create(revision, alice),
    ];
    expect([a1, a2, a3, b].map((s) => store.find(s.id, s.sub === 'bob' ? bob : alice) !== undefined)).toEqual(
      [false, true, true, true],
    );
    expect(store.size).toBe(3);
  });

  it('deleting a session closes its stream', () => {
    const store = new SessionStore();
    const s = store.create(revision, alice);
    s.stream = new SseStream();
    store.delete(s.id);
    expect(s.stream.closed).toBe(true);
    expect(store.find(s.id, alice)).toBeUndefined();
  });
});
