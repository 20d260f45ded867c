import { defineElement } from '../element.js';
import { ALL_SCOPES, bool, EMPTY, int, str } from '../schema.js';
import { applyQuota, type QuotaLimit } from '../shared/quota-counting.js';

export function parsePeriodStart(text: string | undefined): number | undefined {
  if (text === undefined) return Date.parse('0001-01-01T00:00:00Z');
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Limits calls and/or bandwidth per key over a renewal period. Windows are fixed, starting at first-period-start;
 * a renewal period of 0 never renews.
 */
export const quotaByKey = defineElement({
  name: 'quota-by-key',
  summary: 'Enforces a call and/or bandwidth quota per key over a renewal period (403 when exceeded).',
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
  touchesResponse: true,
  compile(node, c) {
    if (!node.has('calls') && !node.has('bandwidth'))
      c.error(node, 'attribute', 'quota-by-key needs calls or bandwidth, got neither');
    const period = node.literal('renewal-period');
    if (period !== 0 && period < 300)
      c.error(node, 'attribute', `quota-by-key/@renewal-period must be 0 or at least 300, got "${period}"`);
    const startText = node.literal('first-period-start');
    const start = parsePeriodStart(typeof startText === 'string' ? startText : undefined);
    if (start === undefined)
      c.error(
        node,
        'attribute',
        `quota-by-key/@first-period-start must be an ISO 8601 date, got "${startText}"`,
      );
    const limit: QuotaLimit = {
      calls: node.has('calls') ? node.literal('calls') : undefined,
      kilobytes: node.has('bandwidth') ? node.literal('bandwidth') : undefined,
      periodSeconds: period,
      originMs: start ?? 0,
    };
    const key = node.getter('counter-key');
    const condition = node.getter('increment-condition');
    return async (run): Promise<'next'> => {
      await applyQuota(run, `quota-by-key:${key(run)}`, limit, condition);
      return 'next';
    };
  },
});
