import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/studio';

const SUMMARY = join(REPO_ROOT, 'scripts/ci-summary.mjs');
const dirs: { remove(): void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

/** `pending`: never run (its process was stopped); `skipped`: `it.skip` or a skip at run time. */
type Status = 'passed' | 'failed' | 'pending' | 'skipped';

/** A vitest JSON report of `files` (path → statuses of its tests), as `vitest --reporter=json` writes. */
function report(root: string, files: Record<string, Status[]>) {
  const all = Object.values(files).flat();
  const count = (s: Status) => all.filter((a) => a === s).length;
  return JSON.stringify({
    numTotalTests: all.length,
    numPassedTests: count('passed'),
    numFailedTests: count('failed'),
    numPendingTests: count('skipped'),
    numTodoTests: 0,
    success: count('failed') === 0,
    testResults: Object.entries(files).map(([file, statuses]) => ({
      name: join(root, file),
      assertionResults: statuses.map((status, i) => ({ title: `test ${i}`, status })),
    })),
  });
}

/** Runs the summary in a scratch directory laid out as .ci/run leaves test-results. */
function summary(setup: {
  run: Record<string, Status[]>;
  stopped?: string[];
  reruns?: { file: string; run?: Record<string, Status[]>; hungAgain?: boolean }[];
  benchFailed?: boolean;
  testsStatus?: number;
}): { lines: string[]; code: number | null } {
  const dir = tempDir('kbs-ci-summary-');
  dirs.push(dir);
  const at = (name: string) => join(dir.path, name);
  writeFileSync(at('vitest.json'), report(dir.path, setup.run));
  writeFileSync(at('stopped.log'), (setup.stopped ?? []).map((l) => `${l}\n`).join(''));
  const reruns = (setup.reruns ?? []).map((rerun, i) => {
    const watchdog = at(`watchdog-rerun-${i}`);
    mkdirSync(watchdog);
    if (rerun.run) writeFileSync(at(`rerun-${i}.json`), report(dir.path, rerun.run));
    if (rerun.hungAgain)
      writeFileSync(join(watchdog, 'stopped.log'), `T test-start ${rerun.file} > test 1\n`);
    return `${rerun.file} ${at(`rerun-${i}.json`)} ${watchdog}\n`;
  });
  writeFileSync(at('reruns.txt'), reruns.join(''));
  const args = ['--vitest', at('vitest.json'), '--stopped', at('stopped.log'), '--reruns', at('reruns.txt')];
  args.push(
    '--bench-failed',
    setup.benchFailed ? '1' : '0',
    '--tests-status',
    String(setup.testsStatus ?? 0),
  );
  const run = spawnSync(process.execPath, [SUMMARY, ...args], { cwd: dir.path, encoding: 'utf8' });
  return { lines: run.stdout.trim().split('\n'), code: run.status };
}

const HANG = '2026-11-27T18:44:57.261Z test-start test/b.test.ts > test 1';

describe('scripts/ci-summary.mjs', () => {
  it('counts the tests, the benchmark smoke run as one check, and the skipped', () => {
    const { lines } = summary({ run: { 'test/a.test.ts': ['passed', 'passed', 'failed', 'skipped'] } });
    expect(lines.at(-1)).toBe('3 passed, 1 failed, 1 skipped');
    expect(summary({ run: { 'test/a.test.ts': ['passed'] }, benchFailed: true }).lines.at(-1)).toBe(
      '1 passed, 1 failed',
    );
  });

  it('fails a run whose vitest exited with an error though no test failed', () => {
    const { lines } = summary({ run: { 'test/a.test.ts': ['passed'] }, testsStatus: 1 });
    expect(lines).toContain(
      'vitest exited with a failure though no test failed (see its unhandled errors above)',
    );
    expect(lines.at(-1)).toBe('2 passed, 1 failed');
  });

  it('passes a hung file that passes when run again alone, counting that run and saying so', () => {
    const { lines } = summary({
      // The first run: one test of b passed before its process hung; the others were never run.
      run: { 'test/a.test.ts': ['passed', 'passed'], 'test/b.test.ts': ['passed', 'pending', 'pending'] },
      stopped: [HANG],
      reruns: [{ file: 'test/b.test.ts', run: { 'test/b.test.ts': ['passed', 'passed', 'passed'] } }],
      testsStatus: 1,
    });
    expect(lines[0]).toBe(`hung, stopped by the watchdog (test-results/watchdog); last event: ${HANG}`);
    expect(lines[1]).toMatch(/run again alone, it passed \(3 tests\): a hang that did not repeat/);
    expect(lines.at(-1)).toBe('6 passed, 0 failed');
  });

  it('fails a hung file that hangs or fails again, or that could not be run again', () => {
    const run = { 'test/b.test.ts': ['passed', 'pending'] as Status[] };
    const hungAgain = summary({
      run,
      stopped: [HANG],
      reruns: [{ file: 'test/b.test.ts', run: { 'test/b.test.ts': ['passed', 'pending'] }, hungAgain: true }],
    });
    expect(hungAgain.lines).toContain('  run again alone, it did not pass: 0 failed, 1 hung again');
    expect(hungAgain.lines.at(-1)).toBe('2 passed, 1 failed');

    const failedAgain = summary({
      run,
      stopped: [HANG],
      reruns: [{ file: 'test/b.test.ts', run: { 'test/b.test.ts': ['passed', 'failed'] } }],
    });
    expect(failedAgain.lines.at(-1)).toBe('2 passed, 1 failed');

    // No report from the second run (it crashed), or a hang between files (no file to run again).
    const noReport = summary({ run, stopped: [HANG], reruns: [{ file: 'test/b.test.ts' }] });
    expect(noReport.lines.at(-1)).toBe('2 passed, 1 failed');
    const betweenFiles = summary({
      run,
      stopped: ['2026-11-27T18:44:57.261Z file-end test/a.test.ts (passed)'],
    });
    expect(betweenFiles.lines.at(-1)).toBe('2 passed, 1 failed');
  });

  it('lists the files of the hung processes once each, for .ci/run to run them again', () => {
    const dir = tempDir('kbs-ci-summary-');
    dirs.push(dir);
    const stopped = join(dir.path, 'stopped.log');
    writeFileSync(
      stopped,
      [
        HANG,
        '2026-11-27T18:50:00.000Z test-end test/b.test.ts > test 2 (passed)',
        '2026-11-27T18:51:00.000Z queued test/c.test.ts',
        '2026-11-27T18:52:00.000Z file-end test/a.test.ts (passed)',
      ].join('\n'),
    );
    const run = spawnSync(process.execPath, [SUMMARY, '--hung-files', stopped], { encoding: 'utf8' });
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('test/b.test.ts\ntest/c.test.ts\n');
  });

  it('counts the tests from the progress events when the run was stopped before vitest wrote its report', () => {
    const dir = tempDir('kbs-ci-summary-');
    dirs.push(dir);
    const progress = join(dir.path, 'progress.log');
    const at = (s: number) => `2026-12-01T12:00:${String(s).padStart(2, '0')}.000Z`;
    writeFileSync(
      progress,
      [
        `${at(0)} queued test/a.test.ts`,
        `${at(0)} queued test/b.test.ts`,
        `${at(0)} queued test/c.test.ts`,
        `${at(1)} file-start test/a.test.ts`,
        `${at(1)} test-start test/a.test.ts > adds (passed) numbers`,
        `${at(2)} test-end test/a.test.ts > adds (passed) numbers (passed)`,
        `${at(2)} test-end test/a.test.ts > subtracts (failed)`,
        `${at(2)} test-end test/a.test.ts > later (skipped)`,
        `${at(3)} file-end test/a.test.ts (failed)`,
        `${at(4)} file-start test/b.test.ts`,
        `${at(5)} test-end test/b.test.ts > waits (passed)`,
        `${at(6)} test-start test/b.test.ts > slowly`,
      ]
        .map((l) => `${l}\n`)
        .join(''),
    );
    const run = (benchFailed: string) =>
      spawnSync(process.execPath, [SUMMARY, '--progress', progress, '--bench-failed', benchFailed], {
        encoding: 'utf8',
      })
        .stdout.trim()
        .split('\n');
    // Two tests passed and one failed before the stop, which is one failure more; the bench is one check.
    expect(run('0')).toEqual([
      `the test command was stopped before vitest wrote its report; counted from ${progress}: 1 of 3 test files finished; the last event: ${at(6)} test-start test/b.test.ts > slowly`,
      '3 passed, 2 failed, 1 skipped',
    ]);
    expect(run('1').at(-1)).toBe('2 passed, 3 failed, 1 skipped');
  });

  it('refuses to run without the vitest report, with its usage', () => {
    const run = spawnSync(process.execPath, [SUMMARY], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('usage: ci-summary.mjs --vitest FILE');
  });
});
