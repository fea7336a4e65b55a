import { afterAll, describe, expect, it } from 'vitest';
import { fuzzParser, type ChildLimits, type FuzzStats } from './harness';
import { FUZZ_TARGETS, type FuzzTargetName } from './protocol';

/**
 * Coverage-guided mutation fuzzing of every parser through its public entry point (docs/reliability.md,
 * Fuzzing): a few seconds per parser in `npm test` (test/fuzz/parsers.test.ts), minutes in
 * `npm run test:stress` (test/stress/fuzz.test.ts). Seeded, so a failure reproduces with the same seed; a finding's input is
 * saved under test-results/fuzz-findings.
 */
const SHORT_RUNS: Record<FuzzTargetName, number> = {
  pdf: 10,
  docx: 30,
  html: 40,
  markdown: 40,
  json: 60,
  csv: 60,
  zip: 60,
  jsonl: 100,
};
const STRESS_FACTOR = 25;

/**
 * Findings of the long run not fixed yet (docs/reliability.md, Fuzzing; todos in regressions.test.ts).
 * Its seeded inputs reach them every time, so the run would fail on what is already known.
 */
const OPEN_FINDINGS: Partial<Record<FuzzTargetName, string>> = {};
const runsOverride = Number(process.env.KBSTUDIO_FUZZ_RUNS) || undefined;

/**
 * A hang is an input that outlives the parser's own time limit: 120 s for PDF (its worker is then
 * terminated), the parse budget for text formats (20 s + 5 s per MB; inputs are at most 8 MB). Slow
 * but bounded inputs are reported as the slowest time, not as failures: on a shared two-core machine
 * timings vary tenfold.
 */
const limitsFor = (target: FuzzTargetName): ChildLimits => ({
  timeoutMs: target === 'pdf' ? 150_000 : 90_000,
  maxOldSpaceMb: 1024,
  maxRssBytes: 1.5 * 1024 ** 3,
});

export function describeParserFuzzing(long: boolean): void {
  const stats: FuzzStats[] = [];
  afterAll(() => {
    for (const s of stats) {
      const refused = Object.entries(s.refused)
        .map(([code, n]) => `${code} ${n}`)
        .join(', ');
      console.info(
        `fuzz ${s.target}: ${s.seeds} seeds + ${s.inputs} inputs in ${s.elapsedMs} ms; corpus ${s.corpusStart} → ${s.corpusEnd}; ` +
          `blocks covered ${s.blocksStart.covered}/${s.blocksStart.known} (seeds) → ${s.blocksEnd.covered}/${s.blocksEnd.known}; ` +
          `accepted ${s.accepted}; refused ${refused || 'none'}; slowest ${s.slowestMs} ms, max RSS ${s.maxRssMb} MB`,
      );
    }
  });

  describe('parser fuzzing: no crash, no hang, bounded memory, every refusal a clear error', () => {
    FUZZ_TARGETS.forEach((target, index) => {
      const numRuns = runsOverride ?? SHORT_RUNS[target] * (long ? STRESS_FACTOR : 1);
      // A long run that would only re-find an open finding is skipped until it is fixed (set
      // KBSTUDIO_FUZZ_OPEN=1 to run it anyway).
      const open = long && OPEN_FINDINGS[target] && process.env.KBSTUDIO_FUZZ_OPEN !== '1';
      it.skipIf(Boolean(open))(
        `${target}: the seeds, then ${numRuns} mutated inputs guided by coverage`,
        async () => {
          // The long run starts elsewhere in the sequence, so it does not repeat the short run's inputs.
          const seed = 0x6b6273 + index + (long ? 1_000 : 0);
          const result = await fuzzParser({ target, seed, numRuns, limits: limitsFor(target) });
          stats.push(result);
          expect(result.findings).toBe(0);
          expect(result.inputs).toBe(numRuns);
          // The mutations must reach past the first check: some inputs parse, some are refused.
          expect(result.accepted + Object.values(result.refused).reduce((a, b) => a + b, 0)).toBe(
            numRuns + result.seeds,
          );
          // Coverage is measured (in worker threads too) and only grows.
          expect(result.blocksStart.covered).toBeGreaterThan(0);
          expect(result.blocksEnd.covered).toBeGreaterThanOrEqual(result.blocksStart.covered);
        },
        long ? 3_600_000 : 300_000,
      );
    });
  });
}
