import type { ElementDefinition } from '../element.js';
import type { Getter } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, EMPTY, int, str } from '../schema.js';

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

export function reporting(node: Parameters<ElementDefinition['compile']>[0]): Reporting {
  const lit = (name: string) => {
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

/** Consumes one rate-limit counter; refuses with 429 RateLimitExceeded when it is used up. */
export async function consume(
  run: RunContext,
  report: Reporting,
  key: string,
  calls: number,
  periodSeconds: number,
  amount: number,
): Promise<void> {
  const result = await run.services.rateLimits.consume(key, periodSeconds, calls, amount);
  const remaining = Math.max(0, result.remaining);
  if (report.remainingVariable !== undefined) run.context.variables.set(report.remainingVariable, remaining);
  const headers: [string, string][] = [];
  if (report.remainingHeader !== undefined) headers.push([report.remainingHeader, String(remaining)]);
  if (report.totalHeader !== undefined) headers.push([report.totalHeader, String(calls)]);
  if (result.allowed) {
    run.responseHeaderAdditions.push(...headers);
    return;
  }
  if (report.retryAfterVariable !== undefined)
    run.context.variables.set(report.retryAfterVariable, result.retryAfterSeconds);
  const message = `Rate limit is exceeded. Try again in ${result.retryAfterSeconds} seconds.`;
  throw new PolicyError('RateLimitExceeded', message, 429, message, [
    [report.retryAfterHeader, String(result.retryAfterSeconds)],
    ...headers,
  ]);
}

/**
 * Limits calls per key (any expression: IP address, subscription, claim …) in a sliding window. The count is
 * taken when the request arrives; increment-condition is evaluated then too (API Management evaluates it after
 * the response, so conditions on the response status are not supported yet and are rejected at load time).
 */
export const rateLimitByKey: ElementDefinition = {
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
  compile(node, c) {
    const condition = node.attributes.get('increment-condition');
    if (condition?.kind === 'expression' && /Response/.test(condition.text)) {
      c.error(
        node,
        'not-implemented',
        'rate-limit-by-key/@increment-condition on the response is not implemented yet',
      );
    }
    const calls = node.int('calls')!;
    const period = node.int('renewal-period')!;
    const key = node.string('counter-key')!;
    const incrementIf: Getter<boolean> = node.bool('increment-condition') ?? (() => true);
    const count = node.int('increment-count')!;
    const report = reporting(node);
    return async (run): Promise<'next'> => {
      const amount = incrementIf(run) ? count(run) : 0;
      await consume(run, report, `rate-limit-by-key:${key(run)}`, calls(run), period(run), amount);
      return 'next';
    };
  },
};
