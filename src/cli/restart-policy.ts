/** How `up` brings back a child that died: exponential backoff, and a limit after which it gives up. */
export interface RestartPolicy {
  /** The wait before the first restart; each restart that follows a short life doubles it. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** A child that stayed up this long before it died is restarted after `initialDelayMs` again. */
  readonly stableAfterMs: number;
  /** More deaths than this within `windowMs`: the child keeps dying, `up` gives up. */
  readonly maxRestarts: number;
  readonly windowMs: number;
}

export const defaultRestartPolicy: RestartPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 5000,
  stableAfterMs: 30_000,
  maxRestarts: 5,
  windowMs: 60_000,
};

export type RestartDecision =
  /** Start it again after `delayMs`; `restart` counts the restarts of this child since `up` started. */
  | { readonly restart: number; readonly delayMs: number }
  /** It died more than `maxRestarts` times within `windowMs`. */
  | { readonly giveUp: true; readonly deaths: number; readonly windowMs: number };

/**
 * The deaths of one child (by its stable name: every Envoy epoch is "envoy") and what to do about the next one.
 * A child that dies again soon after a restart waits twice as long as before, up to the cap; one that served for a
 * while starts over from the initial delay.
 */
export class RestartHistory {
  private readonly deaths: number[] = [];
  private restarts = 0;
  private delayMs = 0;

  constructor(
    private readonly policy: RestartPolicy = defaultRestartPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  /** The number of restarts decided so far. */
  count(): number {
    return this.restarts;
  }

  /** Records a death of a child that had been up since `upSince` (a time of `now`) and decides what follows. */
  died(upSince: number): RestartDecision {
    const now = this.now();
    this.deaths.push(now);
    while (this.deaths.length > 0 && this.deaths[0]! <= now - this.policy.windowMs) this.deaths.shift();
    if (this.deaths.length > this.policy.maxRestarts)
      return { giveUp: true, deaths: this.deaths.length, windowMs: this.policy.windowMs };
    const stable = now - upSince >= this.policy.stableAfterMs;
    this.delayMs =
      stable || this.delayMs === 0
        ? this.policy.initialDelayMs
        : Math.min(this.delayMs * 2, this.policy.maxDelayMs);
    this.restarts += 1;
    return { restart: this.restarts, delayMs: this.delayMs };
  }
}
