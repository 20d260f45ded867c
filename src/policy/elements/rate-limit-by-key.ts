import { defineElement } from '../element.js';
import { ALL_SCOPES, bool, EMPTY, int, str } from '../schema.js';
import { consume, REPORTING, report, reporting } from '../shared/rate-limiting.js';

/**
 * Limits calls per key (any expression: IP address, subscription, claim …) in a sliding window; the counter is
 * shared by every scope that uses the same key, and by every engine process when the state is in Redis.
 * Without increment-condition the call is counted atomically as it arrives. With one, the call is admitted if it
 * would fit, and counted at the end of the request when the condition — which may read context.Response, as in
 * API Management's own example — holds.
 */
export const rateLimitByKey = defineElement({
  name: 'rate-limit-by-key',
  summary: 'Limits the call rate per key in a sliding window (429 when exceeded).',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    calls: int({ required: true, min: 1 }),
    'renewal-period': int({ required: true, min: 1, max: 300 }),
    'counter-key': str({ required: true }),
    'increment-condition': bool(),
    'increment-count': int({ default: 1, min: 0 }),
    ...REPORTING,
  },
  content: EMPTY,
  touchesResponse: true,
  compile(node) {
    const calls = node.getter('calls');
    const period = node.getter('renewal-period');
    const counterKey = node.getter('counter-key');
    const condition = node.getter('increment-condition');
    const count = node.getter('increment-count');
    const options = reporting(node);
    return async (run): Promise<'next'> => {
      const key = `rate-limit-by-key:${counterKey(run)}`;
      const limit = calls(run);
      const periodSeconds = period(run);
      const amount = count(run);
      if (condition === undefined) {
        await consume(run, options, key, limit, periodSeconds, amount);
        return 'next';
      }
      const limits = run.services.limits;
      const result = await limits.slidingWindow({ key, limit, periodSeconds, amount, mode: 'check' });
      report(run, options, result, limit, Math.max(0, limit - result.used - amount));
      run.atEnd(async (ended) => {
        if (condition(ended)) await limits.slidingWindow({ key, limit, periodSeconds, amount, mode: 'add' });
      });
      return 'next';
    };
  },
});
