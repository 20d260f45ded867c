import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedBackend } from '../../../src/config/backend-credentials.js';
import { createEngineServices, type EngineServices } from '../../../src/engine/services.js';
import type { Logger } from '../../../src/policy/services.js';
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

/**
 * Two engines over one Redis agree on a backend's circuit breaker: failures counted by either add up, and a trip
 * recorded by one is honoured by the other (API Management's own instances do not share theirs).
 */
describe('circuit breakers in the shared state', () => {
  let redis: RunningRedis;
  let one: EngineServices;
  let two: EngineServices;

  beforeAll(async () => {
    redis = await startRedis();
    const engine = () =>
      createEngineServices({
        backends: new Map(),
        backendEntities: entities,
        logger: quiet,
        state: { redis: { url: redis.url, keyPrefix: 'b:', commandTimeoutMs: 500, connectTimeoutMs: 1000 } },
      });
    one = engine();
    two = engine();
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await redis?.stop();
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
});
