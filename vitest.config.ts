import { defineConfig } from 'vitest/config';

const tests = (folders: string[]) => folders.map((folder) => `test/${folder}/**/*.test.{ts,tsx}`);

// Test files that start a studio and drive it from Chromium or the CLI. They spend much of their time
// waiting on those processes, and their limits are generous, so they run two at a time, beside each
// other only.
const processes = tests(['e2e', 'cli']);

// Test files that must have the machine to themselves: they kill processes, fuzz, load a server, time
// slow inputs or retries, count the event loop's turns, or time the CI watchdog's stalls. Beside
// another test file on 2 cores, their timings stop meaning anything.
const alone = [
  ...tests(['faults', 'scripts', 'fuzz', 'stress', 'hardening', 'main']),
  'test/client/http/request.test.ts',
  'test/core/ingest/eventLoopTurns.test.ts',
  'test/core/ingest/parsers/parserWorkerPool.test.ts',
  'test/core/workers/backgroundPriority.test.ts',
  'test/core/embed/embeddingThread.test.ts',
];

// Test files that need a module registry of their own: they mock modules or globals (vi.mock,
// vi.stubGlobal), or measure the heap, the collector or a thread's memory, which what an earlier file
// left in the same process would change.
const ownModules = [
  'test/server/multipart.test.ts',
  'test/renderer/features/inspect/InspectPage.test.tsx',
  'test/renderer/ingest/ingestApi.test.ts',
  'test/renderer/lib/announce.test.ts',
  'test/renderer/lib/studioFetch.test.ts',
  'test/client/http/abort.test.ts',
  'test/db/repositories/jobJournal.test.ts',
  'test/db/lexicalIndexCache.test.ts',
  'test/db/settledWithin.test.ts',
  'test/core/ingest/leanHeap.test.ts',
  'test/core/retrieve/lexicalThread.test.ts',
];

// Every other file runs two at a time. Vitest's default on 2 cores is one file at a time, and CI then
// came within a minute of its 20-minute limit on a slow machine (docs/reliability.md, "How the tests
// run"). The groups run one after the other. Each project names its own include: with
// `extends: true`, a project's include adds to the root's.
export default defineConfig({
  test: {
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default is 1 s. A poll waits on a studio, a browser or a worker thread that share 2
    // cores with another test file, and 1 s failed tests whose page was only slow (a document list
    // refreshed after a deletion, under load). A poll that must fail still fails, 10 s later.
    expect: { poll: { timeout: 10_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'shared',
          include: ['test/**/*.test.{ts,tsx}'],
          exclude: [...processes, ...alone, ...ownModules],
          maxWorkers: 2,
          // Each test process runs file after file with the modules it has loaded: evaluating the server's
          // module graph again for each of ~200 files was most of this group's time (docs/reliability.md).
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'own-modules', include: ownModules, maxWorkers: 2, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        // Modules shared too: these suites run the CLI's main() in process (seeding included), and its
        // module graph was evaluated again for each file.
        test: {
          name: 'processes',
          include: processes,
          maxWorkers: 2,
          isolate: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 3 } },
      },
    ],
  },
});
