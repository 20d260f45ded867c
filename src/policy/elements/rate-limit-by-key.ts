import { defineElement } from '../element.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, EMPTY, int, str } from '../schema.js';
import type { SlidingWindowResult } from '../services.js';

/** Options shared by rate-limit and rate-limit-by-key for reporting counts back to the caller. */
export const REPORTING = {
  'retry-after-header-name': str({ expression: false }),
  'retry-after-variable-name': str({ expression: false }),
  'remaining-calls-header-name': str({ expression: false }),
  'remaining-calls-variable-name': str({ expression: false }),
  'total-calls-header-name': str({ expression: false }),
};

export interface Reporting {
  readonly retryAfterHeader: string;
  readonly retryAfterVariable: string | undefined;
  readonly remainingHeader: string | undefined;
  readonly remainingVariable: string | undefined;
  readonly totalHeader: string | undefined;
}

/** Any element that declares REPORTING. */
interface ReportingNode {
  literal(name: keyof typeof REPORTING): string | undefined;
}

export function reporting(node: ReportingNode): Reporting {
  const lit = (name: keyof typeof REPORTING) => {
    const v = node.literal(name);
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  return {
    retryAfterHeader: lit('retry-after-header-name') ?? 'Retry-After',
    retryAfterVariable: lit('retry-after-variable-name'),
    remainingHeader: lit('remaining-calls-header-name'),
    remainingVariable: lit('remaining-calls-variable-name'),
    totalHeader: lit('total-calls-header-name'),
  };
}

/**
 * Reports a sliding-window answer as API Management does: remaining/total headers and variables on an admitted
 * call; 429 RateLimitExceeded with Retry-After (and the same headers) on a refused one.
 */
export function report(
  run: RunContext,
  options: Reporting,
  result: SlidingWindowResult,
  calls: number,
  remaining: number,
): void {
  if (options.remainingVariable !== undefined)
    run.context.variables.set(options.remainingVariable, remaining);
  const headers: [string, string][] = [];
  if (options.remainingHeader !== undefined) headers.push([options.remainingHeader, String(remaining)]);
  if (options.totalHeader !== undefined) headers.push([options.totalHeader, String(calls)]);
  if (result.allowed) {
    run.responseHeaderAdditions.push(...headers);
    return;
  }
  if (options.retryAfterVariable !== undefined)
    run.context.variables.set(options.retryAfterVariable, result.retryAfterSeconds);
  const message = `Rate limit is exceeded. Try again in ${result.retryAfterSeconds} seconds.`;
  throw new PolicyError('RateLimitExceeded', message, 429, message, [
    [options.retryAfterHeader, String(result.retryAfterSeconds)],
    ...headers,
  ]);
}

/** Counts one call on a sliding-window counter now; refuses with 429 when it does not fit. */
export async function consume(
  run: RunContext,
  options: Reporting,
  key: string,
  calls: number,
  periodSeconds: number,
  amount: number,
): Promise<void> {
  const result = await run.services.limits.slidingWindow({
    key,
    limit: calls,
    periodSeconds,
    amount,
    mode: 'consume',
  });
  report(run, options, result, calls, result.remaining);
}

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
