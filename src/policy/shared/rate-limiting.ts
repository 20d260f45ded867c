/** The sliding-window counting and reporting shared by rate-limit and rate-limit-by-key. */
import { PolicyError, type RunContext } from '../runtime.js';
import { str } from '../schema.js';
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
