import type fc from 'fast-check';

/**
 * How long each fuzz property runs. `npm test` gives every property a small, bounded budget so the suite stays fast;
 * `npm run fuzz` raises it (FUZZ_RUNS, FUZZ_SECONDS). A failure prints fast-check's seed and path: set FUZZ_SEED
 * (and the path fast-check prints) to replay exactly that case.
 */
export function fuzzParameters<T>(defaults: { runs: number; seconds: number }): fc.Parameters<T> {
  const runs = Number(process.env.FUZZ_RUNS ?? defaults.runs);
  const seconds = Number(process.env.FUZZ_SECONDS ?? defaults.seconds);
  const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
  return {
    numRuns: runs,
    // Stop early, successfully, when the time budget is spent: the run count is an upper bound.
    interruptAfterTimeLimit: seconds * 1000,
    markInterruptAsFailure: false,
    ...(seed === undefined ? {} : { seed }),
    ...(process.env.FUZZ_PATH ? { path: process.env.FUZZ_PATH } : {}),
  };
}

/** The vitest timeout for a property with this budget: its time limit plus room to finish the run in flight. */
export function testTimeout(defaults: { seconds: number }): number {
  return (Number(process.env.FUZZ_SECONDS ?? defaults.seconds) + 30) * 1000;
}

/** A Node stack frame, as it would appear in a body or message that leaked one. */
export const STACK_FRAME = /\n\s+at .+[(:]\d+:\d+\)?/;
