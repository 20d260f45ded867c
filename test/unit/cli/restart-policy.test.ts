import { describe, expect, it } from 'vitest';
import { RestartHistory, type RestartPolicy } from '../../../src/cli/restart-policy.js';

const policy: RestartPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 5000,
  stableAfterMs: 30_000,
  maxRestarts: 5,
  windowMs: 60_000,
};

/** A history on a clock the test moves. */
function history() {
  let now = 1_000_000;
  const restarts = new RestartHistory(policy, () => now);
  return {
    restarts,
    /** The child started `upMs` ago and died now, `gapMs` after the previous death. */
    dies(upMs: number, gapMs = upMs) {
      now += gapMs;
      return restarts.died(now - upMs);
    },
  };
}

describe('RestartHistory', () => {
  it('waits 100 ms, then twice as long after each short life, and counts the restarts', () => {
    const child = history();
    expect(child.dies(1000)).toEqual({ restart: 1, delayMs: 100 });
    expect(child.dies(1000)).toEqual({ restart: 2, delayMs: 200 });
    expect(child.dies(1000)).toEqual({ restart: 3, delayMs: 400 });
    expect(child.restarts.count()).toBe(3);
  });

  it('caps the wait at 5 s', () => {
    const child = history();
    const delays: number[] = [];
    // Lives long enough apart that the window never fills, short enough never to count as stable.
    for (let death = 0; death < 9; death++) {
      const decision = child.dies(20_000);
      if ('delayMs' in decision) delays.push(decision.delayMs);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  });

  it('starts over from 100 ms once the child served for a while', () => {
    const child = history();
    child.dies(1000);
    child.dies(1000);
    expect(child.dies(45_000)).toEqual({ restart: 3, delayMs: 100 });
  });

  it('gives up on the sixth death within 60 s, and forgets deaths older than that', () => {
    const child = history();
    for (let death = 1; death <= 5; death++) expect(child.dies(500)).toHaveProperty('delayMs');
    expect(child.dies(500)).toEqual({ giveUp: true, deaths: 6, windowMs: 60_000 });

    const slow = history();
    for (let death = 1; death <= 5; death++) slow.dies(500, 13_000);
    // The first of them is more than 60 s ago now.
    expect(slow.dies(500, 13_000)).toHaveProperty('delayMs');
  });
});
