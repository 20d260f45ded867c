import { defineElement } from '../element.js';
import type { Getter } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
import { ALL_SCOPES, bool, EMPTY, int, str } from '../schema.js';
import type { QuotaResult } from '../services.js';

/** .NET TimeSpan "c" format, as API Management prints the time to renewal: `hh:mm:ss`, `d.hh:mm:ss` past a day. */
export function timeSpan(seconds: number): string {
  const days = Math.floor(seconds / 86_400);
  const rest = seconds % 86_400;
  const hms = [Math.floor(rest / 3600), Math.floor((rest % 3600) / 60), rest % 60]
    .map((n) => String(n).padStart(2, '0'))
    .join(':');
  return days > 0 ? `${days}.${hms}` : hms;
}

/** One quota counter: calls and/or kilobytes in fixed windows of `periodSeconds` from `originMs`. */
export interface QuotaLimit {
  readonly calls: number | undefined;
  readonly kilobytes: number | undefined;
  readonly periodSeconds: number;
  readonly originMs: number;
}

/**
 * Request and response bytes as the client and backend declared them (Content-Length), else the body when the
 * pipeline buffered it. A chunked body nothing buffered is not counted: measuring it would mean streaming every
 * response through the engine for a quota that mostly counts calls.
 */
function bytesOf(run: RunContext): number {
  const size = (headers: { getJoined(name: string): string | undefined }, body: { bytes: Buffer } | null) => {
    const declared = Number(headers.getJoined('Content-Length'));
    return Number.isFinite(declared) && declared > 0 ? declared : (body?.bytes.length ?? 0);
  };
  const request = run.context.request;
  const response = run.context.response;
  return (
    size(request.headers, request.body) + (response === null ? 0 : size(response.headers, response.body))
  );
}

function refuse(result: QuotaResult): never {
  const kind = result.exceeded === 'bandwidth' ? 'bandwidth' : 'call volume';
  const renews = result.renewsInSeconds;
  const message =
    renews === undefined
      ? `Out of ${kind} quota.`
      : `Out of ${kind} quota. Quota will be replenished in ${timeSpan(renews)}.`;
  throw new PolicyError(
    'QuotaExceeded',
    message,
    403,
    message,
    renews === undefined ? [] : [['Retry-After', String(renews)]],
  );
}

/**
 * Applies one quota counter to a request: refuses with 403 QuotaExceeded (and Retry-After, the seconds to the
 * window's end) when calls are used up or the bandwidth is spent. Calls are counted atomically as the request
 * arrives, unless `condition` decides at the end of the request; bytes are counted at the end (the response's
 * size is known only then).
 */
export async function applyQuota(
  run: RunContext,
  key: string,
  limit: QuotaLimit,
  condition: Getter<boolean> | undefined,
): Promise<void> {
  const limits = run.services.limits;
  const base = {
    key,
    periodSeconds: limit.periodSeconds,
    originMs: limit.originMs,
    callLimit: limit.calls,
    kilobyteLimit: limit.kilobytes,
  };
  const countNow = condition === undefined;
  const result = await limits.quota({ ...base, calls: 1, bytes: 0, mode: countNow ? 'consume' : 'check' });
  if (!result.allowed) refuse(result);
  if (countNow && limit.kilobytes === undefined) return;
  run.atEnd(async (ended) => {
    if (condition !== undefined && !condition(ended)) return;
    const bytes = limit.kilobytes === undefined ? 0 : bytesOf(ended);
    await limits.quota({ ...base, calls: countNow ? 0 : 1, bytes, mode: 'add' });
  });
}

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
