#!/usr/bin/env node
// Prints the CI summary, ending with the one line CI reads: "N passed, N failed[, N skipped]".
//
//   node scripts/ci-summary.mjs --vitest FILE [--stopped FILE] [--reruns FILE] [--bench-failed 0|1] [--tests-status N]
//   node scripts/ci-summary.mjs --hung-files FILE
//   node scripts/ci-summary.mjs --progress FILE [--bench-failed 0|1]
//
// --vitest     vitest's JSON report of the whole run.
// --stopped    scripts/ci-watchdog.mjs's list of hung test processes it stopped (one last event a line).
// --reruns     one line per test file run again alone after it hung: "FILE JSON-REPORT WATCHDOG-DIR".
// --hung-files prints the test files of a --stopped list, once each, for .ci/run to run them again.
// --progress   without a vitest report (the test command was stopped at its limit before vitest wrote
//              it), counts the tests from scripts/ci-progress-reporter.mjs's events, and the stop as one
//              failure: "0 passed, 1 failed" said nothing of a run that had passed 2,000 tests.
// Vitest counts no failed test for a file whose process was stopped, nor for an unhandled error; a hung
// file counts as one failure unless its run alone passed, which is then said (with where the first
// run's stacks are), so a rare hang stays visible without failing the whole run.
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    vitest: { type: 'string' },
    stopped: { type: 'string' },
    reruns: { type: 'string' },
    'bench-failed': { type: 'string', default: '0' },
    'tests-status': { type: 'string', default: '0' },
    'hung-files': { type: 'string' },
    progress: { type: 'string' },
  },
});
const lines = (file) =>
  file && existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

/** The test file a watchdog event names, when the event was inside one (not between files). */
function fileOfEvent(event) {
  const match = /^\S+ (queued|file-start|test-start|test-end) (\S+)/.exec(event);
  return match?.[2];
}

if (values['hung-files']) {
  for (const file of new Set(lines(values['hung-files']).map(fileOfEvent).filter(Boolean))) console.log(file);
  process.exit(0);
}
if (values.progress) {
  const events = lines(values.progress);
  const count = (state) => events.filter((e) => / test-end .* \((\w+)\)$/.exec(e)?.[1] === state).length;
  const ofKind = (kind) => events.filter((e) => e.split(' ')[1] === kind);
  const queued = new Set(ofKind('queued').map(fileOfEvent)).size;
  const ended = ofKind('file-end').length;
  console.log(
    `the test command was stopped before vitest wrote its report; counted from ${values.progress}: ` +
      `${ended} of ${queued} test files finished; the last event: ${events.at(-1) ?? '(none)'}`,
  );
  const benchFailed = values['bench-failed'] !== '0';
  const passed = count('passed') + (benchFailed ? 0 : 1);
  const failed = count('failed') + 1 + (benchFailed ? 1 : 0);
  const skipped = count('skipped');
  console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));
  process.exit(0);
}
if (!values.vitest) {
  console.error(
    'usage: ci-summary.mjs --vitest FILE [--stopped FILE] [--reruns FILE] [--bench-failed 0|1] [--tests-status N]',
  );
  console.error('       ci-summary.mjs --hung-files FILE');
  console.error('       ci-summary.mjs --progress FILE [--bench-failed 0|1]');
  process.exit(2);
}

const report = JSON.parse(readFileSync(values.vitest, 'utf8'));
const benchFailed = values['bench-failed'] !== '0';

const reruns = new Map(
  lines(values.reruns).map((line) => {
    const [file, json, watchdogDir] = line.split(' ');
    return [file, { json, watchdogDir }];
  }),
);

const stopped = lines(values.stopped);
let passed = report.numPassedTests;
let failed = report.numFailedTests;
for (const last of stopped) {
  console.log(`hung, stopped by the watchdog (test-results/watchdog); last event: ${last}`);
  const file = fileOfEvent(last);
  const rerun = file && reruns.get(file);
  const again = rerun && existsSync(rerun.json) ? JSON.parse(readFileSync(rerun.json, 'utf8')) : undefined;
  const hungAgain = rerun ? lines(`${rerun.watchdogDir}/stopped.log`).length : 0;
  if (!again) {
    failed += 1;
    continue;
  }
  // The file's results are those of its run alone.
  passed += again.numPassedTests - passedIn(report, file);
  const clean = again.numFailedTests === 0 && hungAgain === 0 && again.success !== false;
  // Not clean with nothing counted (vitest's own failure) still fails the run once.
  if (!clean) failed += Math.max(1, again.numFailedTests + hungAgain);
  console.log(
    clean
      ? `  run again alone, it passed (${again.numPassedTests} tests): a hang that did not repeat; its stacks are kept above and in test-results/watchdog`
      : `  run again alone, it did not pass: ${again.numFailedTests} failed, ${hungAgain} hung again`,
  );
}
if (benchFailed) failed += 1;
if (values['tests-status'] !== '0' && failed === 0 && stopped.length === 0) {
  console.log('vitest exited with a failure though no test failed (see its unhandled errors above)');
  failed = 1;
}
if (!benchFailed) passed += 1;
const skipped = report.numPendingTests + (report.numTodoTests || 0);
console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));

/** How many tests of `file` (relative to the repository) passed in `run`. */
function passedIn(run, file) {
  const result = run.testResults.find((r) => relative(process.cwd(), resolve(r.name)) === file);
  return result ? result.assertionResults.filter((a) => a.status === 'passed').length : 0;
}
