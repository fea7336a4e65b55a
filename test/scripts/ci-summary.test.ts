import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/studio';

const SUMMARY = join(REPO_ROOT, 'scripts/ci-summary.mjs');
const dirs: { remove(): void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));
/** A scratch directory removed after the test. */
function scratch() {
  const dir = tempDir('kbs-ci-summary-');
  dirs.push(dir);
  return dir;
}

/** `pending`: never run (its process was stopped); `skipped`: `it.skip` or a skip at run time. */
type Status = 'passed' | 'failed' | 'pending' | 'skipped';

/** A vitest JSON report of `files` (path → statuses of its tests), as `vitest --reporter=json` writes. */
function report(root: string, files: Record<string, Status[]>, fileErrors: Record<string, string> = {}) {
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
      status: statuses.includes('failed') || fileErrors[file] ? 'failed' : 'passed',
      message: fileErrors[file] ?? '',
      assertionResults: statuses.map((status, i) => ({
        title: `test ${i}`,
        fullName: `suite test ${i}`,
        status,
        failureMessages: status === 'failed' ? [`Error: test ${i} failed`] : [],
      })),
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
  /** The run's last progress event, as scripts/ci-progress-reporter.mjs writes it. */
  runEnd?: string;
  /** Files that failed themselves (a hook or their loading): path → vitest's message. */
  fileErrors?: Record<string, string>;
}): { lines: string[]; code: number | null } {
  const dir = scratch();
  const at = (name: string) => join(dir.path, name);
  writeFileSync(at('vitest.json'), report(dir.path, setup.run, setup.fileErrors));
  writeFileSync(
    at('progress.log'),
    `2026-12-02T06:00:00.000Z file-end test/a.test.ts (passed)\n` +
      (setup.runEnd ? `2026-12-02T06:00:01.000Z run-end ${setup.runEnd}\n` : ''),
  );
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
  const args = [
    '--vitest',
    at('vitest.json'),
    '--events',
    at('progress.log'),
    '--stopped',
    at('stopped.log'),
  ];
  args.push('--reruns', at('reruns.txt'));
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

  it('passes a Chromium test file that failed once and passes when run again alone, saying so with its error', () => {
    const { lines } = summary({
      run: { 'test/a.test.ts': ['passed'], 'test/e2e/b.test.ts': ['passed', 'failed', 'passed'] },
      reruns: [{ file: 'test/e2e/b.test.ts', run: { 'test/e2e/b.test.ts': ['passed', 'passed', 'passed'] } }],
      testsStatus: 1,
    });
    expect(lines).toEqual([
      'failed: test/e2e/b.test.ts > suite test 1',
      '  Error: test 1 failed',
      'test/e2e/b.test.ts failed; run again alone, it passed (3 tests): a failure that did not repeat, its error is above',
      '5 passed, 0 failed',
    ]);
  });

  it('fails a Chromium test file that fails or hangs again when run alone, or has no report of that run', () => {
    const run = { 'test/e2e/b.test.ts': ['passed', 'failed'] as Status[] };
    const failedAgain = summary({
      run,
      reruns: [{ file: 'test/e2e/b.test.ts', run: { 'test/e2e/b.test.ts': ['failed', 'passed'] } }],
      testsStatus: 1,
    });
    expect(failedAgain.lines).toContain(
      'test/e2e/b.test.ts failed; run again alone, it did not pass: 1 failed, 0 hung',
    );
    expect(failedAgain.lines.at(-1)).toBe('2 passed, 1 failed');
    const hungAgain = summary({
      run,
      reruns: [
        { file: 'test/e2e/b.test.ts', run: { 'test/e2e/b.test.ts': ['passed', 'pending'] }, hungAgain: true },
      ],
      testsStatus: 1,
    });
    expect(hungAgain.lines.at(-1)).toBe('2 passed, 1 failed');
    const noReport = summary({ run, reruns: [{ file: 'test/e2e/b.test.ts' }], testsStatus: 1 });
    expect(noReport.lines).toContain(
      'test/e2e/b.test.ts failed; run again alone, it did not pass: no report',
    );
    expect(noReport.lines.at(-1)).toBe('2 passed, 1 failed');
  });

  it('counts the unhandled errors of the run’s last event, and a file that failed with no failed test', () => {
    const unhandled = summary({
      run: { 'test/a.test.ts': ['passed'] },
      runEnd: '2 unhandled errors',
      testsStatus: 1,
    });
    expect(unhandled.lines).toEqual([
      'vitest reported 2 unhandled errors (printed in its output above)',
      '2 passed, 2 failed',
    ]);
    const none = summary({ run: { 'test/a.test.ts': ['passed'] }, runEnd: '0 unhandled errors' });
    expect(none.lines).toEqual(['2 passed, 0 failed']);

    // Neither goes unseen beside a Chromium failure that passed when run again.
    const beside = summary({
      run: { 'test/e2e/b.test.ts': ['failed'], 'test/e2e/c.test.ts': ['skipped'] },
      reruns: [{ file: 'test/e2e/b.test.ts', run: { 'test/e2e/b.test.ts': ['passed'] } }],
      fileErrors: { 'test/e2e/c.test.ts': 'Hook timed out in 60000ms.' },
      runEnd: '1 unhandled errors',
      testsStatus: 1,
    });
    expect(beside.lines).toContain(
      'failed: test/e2e/c.test.ts (the file itself: Hook timed out in 60000ms.)',
    );
    expect(beside.lines).toContain('vitest reported 1 unhandled errors (printed in its output above)');
    expect(beside.lines.at(-1)).toBe('2 passed, 2 failed, 1 skipped');
  });

  it('lists the Chromium test files with a failed test that did not hang, and none when more than two failed', () => {
    const dir = scratch();
    const failedFiles = (files: Record<string, Status[]>, stopped: string[] = []) => {
      writeFileSync(join(dir.path, 'vitest.json'), report(dir.path, files));
      writeFileSync(join(dir.path, 'stopped.log'), stopped.map((l) => `${l}\n`).join(''));
      const args = ['--failed-files', 'vitest.json', '--stopped', 'stopped.log'];
      const out = spawnSync(process.execPath, [SUMMARY, ...args], { cwd: dir.path, encoding: 'utf8' });
      expect(out.status).toBe(0);
      return out.stdout;
    };
    // Only Chromium files: a failed unit or CLI test is not a wait on a browser.
    expect(
      failedFiles(
        {
          'test/core/a.test.ts': ['failed'],
          'test/cli/c.test.ts': ['failed'],
          'test/e2e/b.test.ts': ['passed', 'failed'],
          'test/e2e/d.test.ts': ['passed'],
          'test/e2e/e.test.ts': ['failed'],
        },
        ['2026-11-27T18:44:57.261Z test-start test/e2e/e.test.ts > test 0'],
      ),
    ).toBe('test/e2e/b.test.ts\n');
    const many = { 'test/e2e/a.test.ts': ['failed'], 'test/e2e/b.test.ts': ['failed'] } as Record<
      string,
      Status[]
    >;
    expect(failedFiles(many)).toBe('test/e2e/a.test.ts\ntest/e2e/b.test.ts\n');
    expect(failedFiles({ ...many, 'test/e2e/c.test.ts': ['failed'] })).toBe('');
  });

  it('lists the files of the hung processes once each, for .ci/run to run them again', () => {
    const dir = scratch();
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
    const dir = scratch();
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

  it('names each failed test above the counts with the start of its error, colours and library frames out', () => {
    const playwright = [
      '\u001b[31mTimeoutError: locator.click: Timeout 15000ms exceeded.\u001b[39m',
      'Call log:',
      "  - waiting for getByRole('dialog', { name: 'Delete listing' })",
      '',
      '    at /repo/node_modules/playwright-core/lib/client/locator.js:10:5',
      '    at test/e2e/a11yAudit.test.ts:212:8',
      ...Array.from({ length: 20 }, (_, i) => `    at frame${i} (test/e2e/a11yAudit.test.ts:${i}:1)`),
    ].join('\n');
    const { lines } = summary({
      run: { 'test/a.test.ts': ['passed', 'failed'], 'test/b.test.ts': ['failed'] },
    });
    expect(lines.slice(0, 4)).toEqual([
      'failed: test/a.test.ts > suite test 1',
      '  Error: test 1 failed',
      'failed: test/b.test.ts > suite test 0',
      '  Error: test 0 failed',
    ]);

    const dir = scratch();
    const results = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        title: `t${i}`,
        fullName: `audit t${i}`,
        status: 'failed',
        failureMessages: [playwright],
      }));
    const json = join(dir.path, 'vitest.json');
    writeFileSync(
      json,
      JSON.stringify({
        numPassedTests: 0,
        numFailedTests: 7,
        numPendingTests: 0,
        testResults: [{ name: join(dir.path, 'test/e2e/a11yAudit.test.ts'), assertionResults: results(7) }],
      }),
    );
    const out = spawnSync(process.execPath, [SUMMARY, '--vitest', json], { cwd: dir.path, encoding: 'utf8' })
      .stdout.trim()
      .split('\n');
    expect(out.slice(0, 19)).toEqual([
      'failed: test/e2e/a11yAudit.test.ts > audit t0',
      '  TimeoutError: locator.click: Timeout 15000ms exceeded.',
      '  Call log:',
      "    - waiting for getByRole('dialog', { name: 'Delete listing' })",
      '      at test/e2e/a11yAudit.test.ts:212:8',
      ...Array.from({ length: 12 }, (_, i) => `      at frame${i} (test/e2e/a11yAudit.test.ts:${i}:1)`),
      "  … 8 more lines in vitest's output above",
      'failed: test/e2e/a11yAudit.test.ts > audit t1',
    ]);
    // Five failures shown whole, the others counted; the counts stay last.
    expect(out.filter((l) => l.startsWith('failed: '))).toHaveLength(5);
    expect(out.at(-2)).toBe("… and 2 more failed tests, named in vitest's output above");
    expect(out.at(-1)).toBe('1 passed, 7 failed');
  });

  it('prints a timeout’s message from the progress events, where vitest’s report has a placeholder', () => {
    const dir = scratch();
    const json = join(dir.path, 'vitest.json');
    writeFileSync(
      json,
      JSON.stringify({
        numPassedTests: 0,
        numFailedTests: 1,
        numPendingTests: 0,
        testResults: [
          {
            name: join(dir.path, 'test/core/h.test.ts'),
            status: 'failed',
            assertionResults: [
              {
                ancestorTitles: ['the pool'],
                title: 'ranks',
                fullName: 'the pool ranks',
                status: 'failed',
                failureMessages: ['Error: STACK_TRACE_ERROR\n    at test/core/h.test.ts:347:3'],
              },
            ],
          },
        ],
      }),
    );
    const events = join(dir.path, 'progress.log');
    writeFileSync(
      events,
      [
        '2026-12-02T07:00:00.000Z test-end test/core/h.test.ts > the pool > ranks (failed)',
        '2026-12-02T07:00:00.000Z test-error test/core/h.test.ts > the pool > ranks: Test timed out in 30000ms.',
        '2026-12-02T07:00:09.000Z run-end 0 unhandled errors',
      ].join('\n'),
    );
    const out = spawnSync(process.execPath, [SUMMARY, '--vitest', json, '--events', events], {
      cwd: dir.path,
      encoding: 'utf8',
    });
    expect(out.stdout.trim().split('\n')).toEqual([
      'failed: test/core/h.test.ts > the pool ranks',
      '  Error: Test timed out in 30000ms.',
      '      at test/core/h.test.ts:347:3',
      '1 passed, 1 failed',
    ]);

    // Run again alone, the file's failure is told with that run's own events.
    writeFileSync(join(dir.path, 'again.log'), readFileSync(events, 'utf8').replace('30000ms', '60000ms'));
    mkdirSync(join(dir.path, 'watchdog-again'));
    const reruns = join(dir.path, 'reruns.txt');
    writeFileSync(
      reruns,
      `test/core/h.test.ts ${json} ${join(dir.path, 'watchdog-again')} ${join(dir.path, 'again.log')}\n`,
    );
    const args = ['--vitest', json, '--events', events, '--reruns', reruns];
    const again = spawnSync(process.execPath, [SUMMARY, ...args], { cwd: dir.path, encoding: 'utf8' });
    expect(again.stdout.trim().split('\n')).toEqual([
      'failed: test/core/h.test.ts > the pool ranks',
      '  Error: Test timed out in 30000ms.',
      '      at test/core/h.test.ts:347:3',
      'failed: test/core/h.test.ts > the pool ranks',
      '  Error: Test timed out in 60000ms.',
      '      at test/core/h.test.ts:347:3',
      'test/core/h.test.ts failed; run again alone, it did not pass: 1 failed, 0 hung',
      '1 passed, 1 failed',
    ]);
  });

  it('refuses to run without the vitest report, with its usage', () => {
    const run = spawnSync(process.execPath, [SUMMARY], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('usage: ci-summary.mjs --vitest FILE');
  });
});
