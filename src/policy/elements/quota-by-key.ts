import type { ElementDefinition } from '../element.js';
import type { Getter } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, EMPTY, int, str } from '../schema.js';

/** A renewal period of 0 never renews; counted as a very long window. */
const FOREVER_SECONDS = 100 * 365 * 24 * 3600;

function hms(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return [h, m, s].map((n) => String(n).padStart(2, '0')).join(':');
}

/**
 * Consumes a call quota in fixed windows that start at `firstPeriodStart` (ms); refuses with 403 QuotaExceeded
 * and Retry-After when it is used up.
 */
export async function consumeQuota(
  run: RunContext,
  key: string,
  calls: number,
  periodSeconds: number,
  firstPeriodStart: number,
  amount: number,
): Promise<void> {
  const now = run.services.clock.now();
  const window = periodSeconds === 0 ? FOREVER_SECONDS : periodSeconds;
  const index = Math.floor((now - firstPeriodStart) / (window * 1000));
  const windowEnd = firstPeriodStart + (index + 1) * window * 1000;
  const result = await run.services.rateLimits.consume(`${key}@${index}`, window, calls, amount);
  if (result.allowed) return;
  const retry = Math.max(1, Math.ceil((windowEnd - now) / 1000));
  const message = `Out of call volume quota. Quota will be replenished in ${hms(retry)}.`;
  throw new PolicyError('QuotaExceeded', message, 403, message, [['Retry-After', String(retry)]]);
}

export function parsePeriodStart(text: string | undefined): number | undefined {
  if (text === undefined) return Date.parse('0001-01-01T00:00:00Z');
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Limits the number of calls per key over a renewal period (fixed windows). */
export const quotaByKey: ElementDefinition = {
  name: 'quota-by-key',
  summary: 'Enforces a call quota per key over a renewal period (403 when exceeded).',
  sections: ['inbound'],
  scopes: ALL_SCOPES,
  attributes: {
    calls: int({ min: 1, expression: false }),
    bandwidth: int({ min: 1, expression: false }),
    'counter-key': str({ required: true }),
    'increment-condition': bool(),
    'renewal-period': int({ required: true, min: 0, expression: false }),
    'first-period-start': str({ expression: false }),
  },
  content: EMPTY,
  compile(node, c) {
    if (node.has('bandwidth'))
      c.error(node, 'not-implemented', 'quota-by-key/@bandwidth is not implemented yet');
    if (!node.has('calls') && !node.has('bandwidth'))
      c.error(node, 'attribute', 'quota-by-key needs calls, got none');
    const period = Number(node.literal('renewal-period'));
    if (period !== 0 && period < 300) {
      c.error(node, 'attribute', `quota-by-key/@renewal-period must be 0 or at least 300, got "${period}"`);
    }
    const startText = node.literal('first-period-start');
    const start = parsePeriodStart(typeof startText === 'string' ? startText : undefined);
    if (start === undefined)
      c.error(
        node,
        'attribute',
        `quota-by-key/@first-period-start must be an ISO 8601 date, got "${startText}"`,
      );
    const calls = Number(node.literal('calls'));
    const key = node.string('counter-key')!;
    const incrementIf: Getter<boolean> = node.bool('increment-condition') ?? (() => true);
    return async (run): Promise<'next'> => {
      await consumeQuota(
        run,
        `quota-by-key:${key(run)}`,
        calls,
        period,
        start ?? 0,
        incrementIf(run) ? 1 : 0,
      );
      return 'next';
    };
  },
};
