export interface UntilOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Time between checks (default 50 ms); shorter where the condition is cheap and the wait is short. */
  everyMs?: number;
  /** Appended to the timeout error, e.g. the log of the process that did not get ready. */
  detail?: () => string;
}

/**
 * Polls `check` until it holds; fails naming `what` after the timeout. Loops are bounded in time. A check that
 * throws ends the wait at once with its error (e.g. "the process exited"), so a dead process does not cost the
 * whole timeout.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  options: number | UntilOptions = {},
): Promise<void> {
  const {
    timeoutMs = 30_000,
    everyMs = 50,
    detail,
  } = typeof options === 'number' ? { timeoutMs: options } : options;
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) {
      const extra = detail === undefined ? '' : `:\n${detail()}`;
      throw new Error(`timed out waiting for ${what} (${timeoutMs} ms)${extra}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/**
 * Lets real time pass on purpose. Never to wait for something to happen (that is `until`): only to show that
 * something did NOT happen within a window, or to let a clock the test cannot drive move on (Redis's windows).
 * Say at each call why the time has to pass.
 */
export function elapse(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
