import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/build-before-tests.ts'],
    // Integration suites start real Envoy/engine/backend processes; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default leaves a core free (cores - 1): on a 2-core machine, one file at a time. The end-to-end files
    // spend much of their time waiting (Envoy draining, restart backoffs, health checks), so a file per core.
    maxWorkers: availableParallelism(),
  },
});
