import { describe, expect, it } from 'vitest';
import type { ResolvedBackend } from '../../../src/config/backend-credentials.js';
import { BackendBreakers, type BreakerStore } from '../../../src/engine/backend-breakers.js';
import { BackendPools } from '../../../src/engine/backend-pools.js';

const single = (id: string, tripping = false): ResolvedBackend => ({
  id,
  url: `http://127.0.0.1/${id}`,
  secretValues: [],
  ...(tripping
    ? {
        circuitBreaker: {
          rules: [
            {
              failureCondition: { count: 1, interval: 'PT1M', statusCodeRanges: [{ min: 429, max: 429 }] },
              tripDuration: 'PT1M',
              acceptRetryAfter: true,
            },
          ],
        },
      }
    : {}),
});

function poolOf(services: { id: string; priority: number; weight: number }[], tripping: string[] = []) {
  const trips = new Map<string, number>();
  const clock = { now: 1_000 };
  const store: BreakerStore = {
    trippedUntil: async (id) => trips.get(id),
    trip: async (id, until) => void trips.set(id, until),
    countFailure: async () => 1,
    countAnswer: async () => 1,
  };
  const entities: ResolvedBackend[] = [...new Set(services.map((service) => service.id)).values()].map((id) =>
    single(id, tripping.includes(id)),
  );
  entities.push({ id: 'pool', type: 'pool', pool: { services }, secretValues: [] });
  const breakers = new BackendBreakers(
    entities.flatMap((entity) =>
      entity.circuitBreaker ? [[entity.id, entity.circuitBreaker.rules[0]!] as const] : [],
    ),
    store,
    { now: () => clock.now },
  );
  const pools = new BackendPools(entities, breakers);
  const picks = async (n: number) => {
    const counts: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const choice = await pools.choose('pool');
      const id = choice.kind === 'backend' ? choice.backend.id : choice.kind;
      counts[id] = (counts[id] ?? 0) + 1;
    }
    return counts;
  };
  return { pools, breakers, clock, picks };
}

/** API Management's load-balanced pool: https://learn.microsoft.com/azure/api-management/backends#load-balanced-pool */
describe('backend pools', () => {
  it('spreads requests by weight within the highest priority group (exact per engine: smooth round-robin)', async () => {
    const { picks } = poolOf([
      { id: 'a', priority: 1, weight: 3 },
      { id: 'b', priority: 1, weight: 1 },
      { id: 'c', priority: 2, weight: 1 },
    ]);
    expect(await picks(400)).toEqual({ a: 300, b: 100 });
  });

  it('spreads evenly when every weight is 0 (round-robin)', async () => {
    const { picks } = poolOf([
      { id: 'a', priority: 1, weight: 0 },
      { id: 'b', priority: 1, weight: 0 },
    ]);
    expect(await picks(10)).toEqual({ a: 5, b: 5 });
  });

  it('goes to a lower priority group only while every backend of the higher ones is tripped', async () => {
    const { picks, breakers, clock } = poolOf(
      [
        { id: 'a', priority: 1, weight: 1 },
        { id: 'b', priority: 1, weight: 1 },
        { id: 'c', priority: 2, weight: 1 },
        { id: 'd', priority: 2, weight: 1 },
      ],
      ['a', 'b'],
    );
    await breakers.observe('a', 429, '10');
    expect(await picks(4)).toEqual({ b: 4 });
    await breakers.observe('b', 429, '20');
    expect(await picks(4)).toEqual({ c: 2, d: 2 });
    clock.now += 10_001;
    expect(await picks(2)).toEqual({ a: 2 });
  });

  it('a pool whose every backend is tripped is unavailable; an unknown id is unknown', async () => {
    const { pools, breakers } = poolOf([{ id: 'a', priority: 1, weight: 1 }], ['a']);
    await breakers.observe('a', 429, undefined);
    expect(await pools.choose('pool')).toMatchObject({ kind: 'unavailable' });
    expect(await pools.choose('a')).toMatchObject({ kind: 'unavailable' });
    expect(await pools.choose('nope')).toEqual({ kind: 'unknown' });
  });
});
