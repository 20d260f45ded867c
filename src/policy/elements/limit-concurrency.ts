import { defineElement } from '../element.js';
import { sequence } from '../node.js';
import { PolicyError } from '../runtime.js';
import { ALL_SCOPES, ALL_SECTIONS, int, POLICIES, str } from '../schema.js';

/**
 * Runs its statements only while fewer than max-count requests with the same key are inside; beyond that, 429
 * at once. Slots come from the shared limit counters, so with the state in Redis the bound holds across every
 * engine process. A slot is given back when the statements finish — or, when they include forward-request (whose
 * backend call happens after the section), when the request ends. A slot whose request never ends (a crashed
 * engine) expires after the configured lease.
 */
export const limitConcurrency = defineElement({
  name: 'limit-concurrency',
  summary: 'Limits how many requests with the same key run its statements at once (429 beyond).',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    key: str({ required: true }),
    'max-count': int({ required: true, min: 1, expression: false }),
  },
  content: POLICIES,
  // The slot of a wrapped forward-request is held until the backend answered: the engine must see that answer.
  touchesResponse: true,
  compile(node) {
    const key = node.getter('key');
    const max = node.literal('max-count');
    const body = sequence(node.statements);
    return async (run) => {
      const limits = run.services.limits;
      const lease = await limits.acquire(`limit-concurrency:${key(run)}`, max);
      if (lease === undefined)
        throw new PolicyError(
          'ConcurrencyLimitExceeded',
          `More than ${max} concurrent requests with this key.`,
          429,
          'Too many requests',
        );
      const forwardBefore = run.forward;
      let flow: Awaited<ReturnType<typeof body>>;
      try {
        flow = await body(run);
      } catch (error) {
        await limits.release(lease);
        throw error;
      }
      if (run.forward !== forwardBefore) run.atEnd(() => limits.release(lease));
      else await limits.release(lease);
      return flow;
    };
  },
});
