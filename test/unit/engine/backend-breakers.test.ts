import { describe, expect, it } from 'vitest';
import type { CircuitBreakerRuleConfig } from '../../../src/config/backend-schema.js';
import {
  BackendBreakers,
  type BreakerStore,
  retryAfterSeconds,
} from '../../../src/engine/backend-breakers.js';

/** A store in a map, with a window per counted list, on the test's clock. */
function mapStore(clock: { now: number }): BreakerStore & { trips: Map<string, number> } {
  const trips = new Map<string, number>();
  const counts = new Map<string, number[]>();
  const count = async (key: string, interval: number) => {
    const recent = (counts.get(key) ?? []).filter((at) => at > clock.now - interval * 1000);
    recent.push(clock.now);
    counts.set(key, recent);
    return recent.length;
  };
  return {
    trips,
    trippedUntil: async (id) => trips.get(id),
    trip: async (id, until) => void trips.set(id, until),
    countFailure: (id, interval) => count(`${id}:failures`, interval),
    countAnswer: (id, interval) => count(`${id}:answers`, interval),
  };
}

const rule = (count: number, acceptRetryAfter = false): CircuitBreakerRuleConfig => ({
  name: 'r',
  failureCondition: {
    count,
    interval: 'PT10S',
    statusCodeRanges: [
      { min: 500, max: 599 },
      { min: 429, max: 429 },
    ],
  },
  tripDuration: 'PT30S',
  acceptRetryAfter,
});

/** API Management's circuit breaker: https://learn.microsoft.com/azure/api-management/backends#circuit-breaker */
describe('backend circuit breakers', () => {
  it('trips after count failures within the interval, for tripDuration, then closes', async () => {
    const clock = { now: 1_000_000 };
    const breakers = new BackendBreakers([['a', rule(3)]], mapStore(clock), { now: () => clock.now });
    await breakers.observe('a', 500, undefined);
    await breakers.observe('a', 200, undefined);
    await breakers.observe('a', 503, undefined);
    expect(await breakers.isTripped('a')).toBe(false);
    expect(await breakers.observe('a', 502, undefined)).toBe(clock.now + 30_000);
    expect(await breakers.isTripped('a')).toBe(true);
    clock.now += 30_001;
    expect(await breakers.isTripped('a')).toBe(false);
  });

  it('with a percentage, trips when that share of the answers within the interval are failures', async () => {
    const clock = { now: 1_000_000 };
    const byShare: CircuitBreakerRuleConfig = {
      ...rule(1),
      failureCondition: { percentage: 50, interval: 'PT10S', statusCodeRanges: [{ min: 500, max: 599 }] },
    };
    const breakers = new BackendBreakers([['a', byShare]], mapStore(clock), { now: () => clock.now });
    for (let answer = 0; answer < 3; answer += 1) await breakers.observe('a', 200, undefined);
    // 1 of 4, then 2 of 5: under half.
    expect(await breakers.observe('a', 500, undefined)).toBeUndefined();
    expect(await breakers.observe('a', 502, undefined)).toBeUndefined();
    // 3 of 6: half the answers within the interval failed.
    expect(await breakers.observe('a', 503, undefined)).toBe(clock.now + 30_000);
    expect(await breakers.isTripped('a')).toBe(true);
  });

  it('counts only failures within the interval, and only statuses in the ranges', async () => {
    const clock = { now: 1_000_000 };
    const breakers = new BackendBreakers([['a', rule(2)]], mapStore(clock), { now: () => clock.now });
    await breakers.observe('a', 500, undefined);
    clock.now += 11_000;
    await breakers.observe('a', 404, undefined);
    await breakers.observe('a', 500, undefined);
    expect(await breakers.isTripped('a')).toBe(false);
  });

  it('takes the Retry-After of the tripping answer as the trip duration when acceptRetryAfter', async () => {
    const clock = { now: 1_000_000 };
    const store = mapStore(clock);
    const breakers = new BackendBreakers(
      [
        ['a', rule(1, true)],
        ['b', rule(1)],
      ],
      store,
      { now: () => clock.now },
    );
    await breakers.observe('a', 429, '5');
    await breakers.observe('b', 429, '5');
    expect(store.trips.get('a')).toBe(clock.now + 5000);
    expect(store.trips.get('b')).toBe(clock.now + 30_000);
  });

  it('a trip another engine recorded in the shared store holds here too', async () => {
    const clock = { now: 1_000_000 };
    const store = mapStore(clock);
    const one = new BackendBreakers([['a', rule(1)]], store, { now: () => clock.now });
    const two = new BackendBreakers([['a', rule(1)]], store, { now: () => clock.now });
    await one.observe('a', 500, undefined);
    expect(await two.isTripped('a')).toBe(true);
  });

  it('a backend without a rule is never tripped', async () => {
    const clock = { now: 0 };
    const breakers = new BackendBreakers([], mapStore(clock), { now: () => clock.now });
    expect(await breakers.observe('x', 500, undefined)).toBeUndefined();
    expect(await breakers.isTripped('x')).toBe(false);
  });

  it('reads Retry-After as delay-seconds or an HTTP-date (RFC 9110 §10.2.3)', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('120', now)).toBe(120);
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60);
    expect(retryAfterSeconds('0', now)).toBeUndefined();
    expect(retryAfterSeconds('soon', now)).toBeUndefined();
  });
});
