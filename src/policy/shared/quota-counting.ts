/** The quota counting shared by quota and quota-by-key. */
import type { Getter } from '../node.js';
import { PolicyError, type RunContext } from '../runtime.js';
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
