/**
 * The wait between retries, shared by the retry element (its own loop) and the runner (the backend call Envoy
 * retries for a retry that wraps forward-request).
 */

/** API Management's schedule: interval only = fixed; + delta = linear; + max-interval = exponential. */
export function waitMs(
  attempt: number,
  interval: number,
  maxInterval: number | undefined,
  delta: number | undefined,
): number {
  let seconds = interval;
  if (delta !== undefined && maxInterval === undefined) seconds = interval + (attempt - 1) * delta;
  if (delta !== undefined && maxInterval !== undefined) {
    seconds = Math.min(maxInterval, interval + (2 ** attempt - 1) * delta);
  }
  return seconds * 1000;
}
