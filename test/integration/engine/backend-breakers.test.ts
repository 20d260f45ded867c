import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedBackend } from '../../../src/config/backend-credentials.js';
import { createEngineServices, type EngineServices } from '../../../src/engine/services.js';
import type { Logger } from '../../../src/policy/services.js';
import type { StateConfig } from '../../../src/state/options.js';
import { type RunningRedis, startRedis } from '../../processes/redis.js';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

const entities: ResolvedBackend[] = [
  {
    id: 'primary',
    url: 'http://127.0.0.1:9/primary',
    secretValues: [],
    circuitBreaker: {
      rules: [
        {
          failureCondition: { count: 2, interval: 'PT1M', statusCodeRanges: [{ min: 429, max: 429 }] },
          tripDuration: 'PT1M',
          acceptRetryAfter: true,
        },
      ],
    },
  },
  { id: 'secondary', url: 'http://127.0.0.1:9/secondary', secretValues: [] },
  {
    id: 'pool',
    type: 'pool',
    pool: {
      services: [
        { id: 'primary', priority: 1, weight: 1 },
        { id: 'secondary', priority: 2, weight: 1 },
      ],
    },
    secretValues: [],
  },
];

/** Two engines' services over `state`, asserting they agree on the pool's primary once it is tripped. */
function agreesOnTrips(open: () => Promise<{ state: Partial<StateConfig>; close(): Promise<void> }>) {
  let shared: { state: Partial<StateConfig>; close(): Promise<void> };
  let one: EngineServices;
  let two: EngineServices;

  beforeAll(async () => {
    shared = await open();
    const engine = () =>
      createEngineServices({
        backends: new Map(),
        backendEntities: entities,
        logger: quiet,
        state: shared.state,
      });
    one = engine();
    two = engine();
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await shared?.close();
  });

  it('counts failures across engines and trips on both', async () => {
    const chosen = async (services: EngineServices) => {
      const choice = await services.backends.choose!('pool');
      return choice.kind === 'backend' ? choice.backend.id : choice.kind;
    };
    expect(await chosen(two)).toBe('primary');
    await one.breakers.observe('primary', 429, undefined);
    expect(await chosen(two)).toBe('primary');
    // The second failure, seen by the other engine, is the rule's count-th: the trip holds for both.
    await two.breakers.observe('primary', 429, '30');
    expect(await chosen(one)).toBe('secondary');
    expect(await chosen(two)).toBe('secondary');
    expect(await one.backends.choose!('primary')).toMatchObject({ kind: 'unavailable' });
  });
}

/**
 * Two engines over one Redis agree on a backend's circuit breaker: failures counted by either add up, and a trip
 * recorded by one is honoured by the other (API Management's own instances do not share theirs).
 */
describe('circuit breakers in the shared state: Redis', () => {
  agreesOnTrips(async () => {
    const redis: RunningRedis = await startRedis();
    return {
      state: { redis: { url: redis.url, keyPrefix: 'b:', commandTimeoutMs: 500, connectTimeoutMs: 1000 } },
      close: () => redis.stop(),
    };
  });
});

/** The engines of one machine over its embedded store (`state.dataDir`) agree the same way. */
describe('circuit breakers in the shared state: the embedded store', () => {
  agreesOnTrips(async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-breakers-'));
    return { state: { dataDir }, close: () => rm(dataDir, { recursive: true, force: true }) };
  });
});
