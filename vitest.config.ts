import { defineConfig } from 'vitest/config';

// Test files that must have the machine to themselves: they start browsers, servers and CLI processes,
// kill processes, measure time or memory, or count the event loop's turns. Run beside another test
// file on 2 cores, their timings stop meaning anything. Every other file runs two at a time, which
// takes about a quarter off a CI run on 2 cores (docs/reliability.md, "How the tests run").
const alone = [
  ...['e2e', 'faults', 'cli', 'scripts', 'fuzz', 'stress', 'hardening', 'main'].map(
    (folder) => `test/${folder}/**/*.test.{ts,tsx}`,
  ),
  'test/client/http/request.test.ts',
  'test/core/ingest/eventLoopTurns.test.ts',
  'test/core/ingest/parsers/parserWorkerPool.test.ts',
  'test/core/workers/backgroundPriority.test.ts',
  'test/core/embed/embeddingThread.test.ts',
];

// Each project names its own include: with `extends: true`, a project's include adds to the root's.
export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.{ts,tsx}'],
          exclude: alone,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
