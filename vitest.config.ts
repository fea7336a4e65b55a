import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.{ts,tsx}'],
    environment: 'node',
    pool: 'forks',
    // Vitest's default, one file per core but one, ran one file at a time on a 2-core machine, and much
    // of the suite waits on child processes, Chromium and sockets: two at a time took CI from 1,193 s
    // to 974 s on a slow 2-core machine (vitest itself 932 s to 692 s), every test passing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
