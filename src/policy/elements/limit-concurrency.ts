import type { ElementDefinition } from '../element.js';
import { sequence } from '../node.js';
import { PolicyError } from '../runtime.js';
import { ALL_SCOPES, ALL_SECTIONS, int, POLICIES, str } from '../schema.js';

/**
 * Runs its statements only while fewer than max-count requests with the same key are inside; otherwise 429
 * at once. Counts are per engine process (each engine instance enforces its own share).
 */
export const limitConcurrency: ElementDefinition = {
  name: 'limit-concurrency',
  summary: 'Limits how many requests with the same key run its statements at once (429 beyond).',
  sections: ALL_SECTIONS,
  scopes: ALL_SCOPES,
  attributes: {
    key: str({ required: true }),
    'max-count': int({ required: true, min: 1, expression: false }),
  },
  content: POLICIES,
  compile(node) {
    const key = node.string('key')!;
    const max = Number(node.literal('max-count'));
    const body = sequence(node.statements);
    const inside = new Map<string, number>();
    return async (run) => {
      const k = key(run);
      const n = inside.get(k) ?? 0;
      if (n >= max) {
        throw new PolicyError(
          'ConcurrencyLimitExceeded',
          'Too many concurrent requests.',
          429,
          'Too many requests',
        );
      }
      inside.set(k, n + 1);
      try {
        return await body(run);
      } finally {
        const left = (inside.get(k) ?? 1) - 1;
        if (left <= 0) inside.delete(k);
        else inside.set(k, left);
      }
    };
  },
};
