import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineState } from '../../../src/engine/engine-state.js';
import type { Logger } from '../../../src/log.js';
import { clientConnections, type RunningRedis, startRedis } from '../../processes/redis.js';
import { until } from '../../processes/wait.js';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

let redis: RunningRedis;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.close();
});

describe('the state backend of an engine process, against a real Redis', () => {
  it('runs the caches, counters, vectors and event stream over one Redis connection', async () => {
    const state = new EngineState({
      state: {
        redis: { url: redis.url, keyPrefix: 'backend-test:', commandTimeoutMs: 2000, connectTimeoutMs: 1000 },
        loggers: { audit: { stream: 'audit' } },
      },
      logger: quiet,
    });
    try {
      expect(state.backend.kind).toBe('redis');
      await until(() => clientConnections(redis) === 1, 'the engine state to connect');
      await state.values.set('v', { value: 'kept' }, 60, 'external');
      await state.responses.get('r', 'external');
      await state.limits.slidingWindow({ key: 'k', limit: 5, periodSeconds: 60, amount: 1, mode: 'consume' });
      await state.vectors.add('p', new Float32Array([1, 0]), Buffer.from('x'), 60);
      expect(state.eventStream!.send({ loggerId: 'audit', message: 'hello' })).toBe('queued');
      await state.eventStream!.flush();
      expect(redis.cli('XLEN', 'backend-test:audit').trim()).toBe('1');
      expect(clientConnections(redis)).toBe(1);
    } finally {
      await state.close();
    }
    await until(() => clientConnections(redis) === 0, 'the connection to close with the state');
  });
});
