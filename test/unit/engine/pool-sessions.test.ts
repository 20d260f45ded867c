import { describe, expect, it } from 'vitest';
import type { ResolvedBackend } from '../../../src/config/backend-credentials.js';
import { BackendBreakers, type BreakerStore } from '../../../src/engine/backend-breakers.js';
import { BackendPools } from '../../../src/engine/backend-pools.js';
import type { BackendChoice, BackendSelection } from '../../../src/policy/index.js';

const COOKIE = 'APIM-Backend-Affinity';

/** Two engines' pools over the same entities and the same (shared) trips. */
function enginesOver(trips = new Map<string, number>()) {
  const store: BreakerStore = {
    trippedUntil: async (id) => trips.get(id),
    trip: async (id, until) => void trips.set(id, until),
    countFailure: async () => 1,
    countAnswer: async () => 1,
  };
  const rule = {
    failureCondition: { count: 1, interval: 'PT1M', statusCodeRanges: [{ min: 429, max: 429 }] },
    tripDuration: 'PT1M',
    acceptRetryAfter: false,
  };
  const entities: ResolvedBackend[] = ['east-deployment', 'west-deployment', 'north-deployment'].map(
    (id) => ({
      id,
      url: `http://127.0.0.1/${id}`,
      secretValues: [],
      circuitBreaker: { rules: [rule] },
    }),
  );
  entities.push({
    id: 'pool',
    type: 'pool',
    pool: {
      services: ['east-deployment', 'west-deployment', 'north-deployment'].map((id) => ({
        id,
        priority: 1,
        weight: 1,
      })),
      sessionAffinity: { sessionId: { source: 'Cookie', name: COOKIE } },
    },
    secretValues: [],
  });
  entities.push({
    id: 'plain',
    type: 'pool',
    pool: { services: [{ id: 'east-deployment', priority: 1, weight: 1 }] },
    secretValues: [],
  });
  const engine = () =>
    new BackendPools(
      entities,
      new BackendBreakers(
        entities.flatMap((entity) =>
          entity.circuitBreaker ? [[entity.id, entity.circuitBreaker.rules[0]!] as const] : [],
        ),
        store,
        { now: () => 1_000 },
      ),
    );
  return { one: engine(), other: engine(), trips };
}

const selection = (choice: BackendChoice): BackendSelection => {
  if (choice.kind !== 'backend') throw new Error(`no backend: ${choice.kind}`);
  return {
    baseUrl: choice.backend.url,
    backendId: choice.backend.id,
    ...(choice.poolId === undefined ? {} : { poolId: choice.poolId }),
    ...(choice.session === undefined ? {} : { session: choice.session }),
  };
};

/** The cookie's value as a client sends it back (`name=value` of the Set-Cookie). */
const sentBack = (setCookie: string | undefined) => {
  const pair = setCookie?.split(';')[0] ?? '';
  return (name: string) => (pair.startsWith(`${name}=`) ? pair.slice(name.length + 1) : undefined);
};

/** API Management's session awareness: https://learn.microsoft.com/azure/api-management/backends#session-awareness */
describe('pool sessions', () => {
  it('sets a session cookie on a first request, and a client that sends it back stays on that backend', async () => {
    const { one } = enginesOver();
    const first = selection(await one.choose('pool'));
    const setCookie = one.sessionCookie(first);
    expect(setCookie).toMatch(
      new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{16}\\.[A-Za-z0-9_-]{12}; Path=/; HttpOnly$`),
    );
    // Neither the backend's id nor its URL is in it.
    expect(setCookie).not.toContain(first.backendId);
    expect(setCookie).not.toContain('127.0.0.1');
    const cookies = sentBack(setCookie);
    for (let i = 0; i < 6; i++) {
      const again = selection(await one.choose('pool', cookies));
      expect(again.backendId).toBe(first.backendId);
      // The cookie already names it: nothing to set.
      expect(one.sessionCookie(again)).toBeUndefined();
    }
    // Without the cookie the pool spreads as before.
    const spread = new Set<string>();
    for (let i = 0; i < 6; i++) spread.add(selection(await one.choose('pool')).backendId!);
    expect(spread).toEqual(new Set(['east-deployment', 'west-deployment', 'north-deployment']));
  });

  it('any engine reads a session the same, with no shared state', async () => {
    const { one, other } = enginesOver();
    const first = selection(await one.choose('pool'));
    const cookies = sentBack(one.sessionCookie(first));
    for (let i = 0; i < 3; i++)
      expect(selection(await other.choose('pool', cookies)).backendId).toBe(first.backendId);
  });

  it('moves a session whose backend is tripped to the one the pool chooses, under the same id, and keeps it there', async () => {
    const { one, trips } = enginesOver();
    const first = selection(await one.choose('pool'));
    const setCookie = one.sessionCookie(first)!;
    const sessionId = /=([^.]+)\./.exec(setCookie)![1];
    trips.set(first.backendId!, 60_000);

    const moved = selection(await one.choose('pool', sentBack(setCookie)));
    expect(moved.backendId).not.toBe(first.backendId);
    const movedCookie = one.sessionCookie(moved);
    expect(movedCookie).toContain(`${COOKIE}=${sessionId}.`);
    expect(movedCookie).not.toBe(setCookie);
    // Once its old backend is back, the session stays on the new one: affinity, not priority.
    trips.delete(first.backendId!);
    for (let i = 0; i < 3; i++)
      expect(selection(await one.choose('pool', sentBack(movedCookie))).backendId).toBe(moved.backendId);
  });

  it('starts a new session for a cookie it did not set, and keeps none for a pool without affinity', async () => {
    const { one } = enginesOver();
    const forged = selection(await one.choose('pool', () => 'not-a-session'));
    expect(forged.session?.pinned).toBeUndefined();
    expect(one.sessionCookie(forged)).toMatch(new RegExp(`^${COOKIE}=`));
    const unknownBackend = selection(await one.choose('pool', () => 'abcdefghijklmnop.AAAAAAAAAAAA'));
    expect(one.sessionCookie(unknownBackend)).toContain(`${COOKIE}=abcdefghijklmnop.`);

    const plain = selection(await one.choose('plain', () => 'abcdefghijklmnop.AAAAAAAAAAAA'));
    expect(plain.session).toBeUndefined();
    expect(one.sessionCookie(plain)).toBeUndefined();
  });
});
