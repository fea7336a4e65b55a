#!/usr/bin/env node
// Prints the CI summary, ending with the one line CI reads: "N passed, N failed[, N skipped]".
//
//   node scripts/ci-summary.mjs --vitest FILE [--events FILE] [--stopped FILE] [--reruns FILE] [--bench-failed 0|1] [--tests-status N]
//   node scripts/ci-summary.mjs --hung-files FILE
//   node scripts/ci-summary.mjs --failed-files FILE [--stopped FILE]
//   node scripts/ci-summary.mjs --progress FILE [--bench-failed 0|1]
//
// --vitest     vitest's JSON report of the whole run.
// --events     scripts/ci-progress-reporter.mjs's events of that run: its last line counts the unhandled
//              errors, which vitest's report leaves out.
// --stopped    scripts/ci-watchdog.mjs's list of hung test processes it stopped (one last event a line).
// --reruns     one line per test file run again alone after it hung or failed:
//              "FILE JSON-REPORT WATCHDOG-DIR [PROGRESS-EVENTS]".
// --hung-files prints the test files of a --stopped list, once each, for .ci/run to run them again.
// --failed-files prints the Chromium test files (test/e2e) of a vitest report that have a failed test and
//              did not hang, for .ci/run to run them again; none when more than MAX_RERUNS failed.
// --progress   without a vitest report (the test command was stopped at its limit before vitest wrote
//              it), counts the tests from scripts/ci-progress-reporter.mjs's events, and the stop as one
//              failure: "0 passed, 1 failed" said nothing of a run that had passed 2,000 tests.
// Vitest counts no failed test for a file whose process was stopped, nor for an unhandled error; a hung
// file counts as one failure unless its run alone passed, which is then said (with where the first
// run's stacks are), so a rare hang stays visible without failing the whole run. A Chromium test file
// with a failed test is treated the same way: its waits are wall-clock waits on a browser and a studio
// sharing 2 cores with another test file, and one click that timed out once in ~2,000 tests stopped a
// landing (docs/reliability.md, "A failure that does not repeat"). A failure that repeats fails the run.
// Each failed test is named above the counts with the start of its error (a Playwright error's call
// log included): CI logs are often kept only by their tail, and vitest's own account of a failure is
// printed long before it, above the benchmark smoke run.
import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';

const { values } = parseArgs({
  options: {
    vitest: { type: 'string' },
    stopped: { type: 'string' },
    reruns: { type: 'string' },
    'bench-failed': { type: 'string', default: '0' },
    'tests-status': { type: 'string', default: '0' },
    'hung-files': { type: 'string' },
    'failed-files': { type: 'string' },
    events: { type: 'string' },
    progress: { type: 'string' },
  },
});
const MAX_FAILURES = 5;
const MAX_LINES = 16;
const MAX_RERUNS = 2;
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
if (values['failed-files']) {
  const run = JSON.parse(readFileSync(values['failed-files'], 'utf8'));
  const hung = new Set(lines(values.stopped).map(fileOfEvent));
  const files = run.testResults
    .filter((r) => r.assertionResults.some((a) => a.status === 'failed'))
    .map((r) => relative(process.cwd(), resolve(r.name)))
    .filter((file) => file.startsWith('test/e2e/') && !hung.has(file));
  // More than a few failed files is not a slow click: nothing is run again, and the run fails.
  if (files.length <= MAX_RERUNS) for (const file of files) console.log(file);
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
    'usage: ci-summary.mjs --vitest FILE [--events FILE] [--stopped FILE] [--reruns FILE] [--bench-failed 0|1] [--tests-status N]',
  );
  console.error('       ci-summary.mjs --hung-files FILE');
  console.error('       ci-summary.mjs --failed-files FILE [--stopped FILE]');
  console.error('       ci-summary.mjs --progress FILE [--bench-failed 0|1]');
  process.exit(2);
}

const report = JSON.parse(readFileSync(values.vitest, 'utf8'));
const benchFailed = values['bench-failed'] !== '0';

const reruns = new Map(
  lines(values.reruns).map((line) => {
    const [file, json, watchdogDir, events] = line.split(' ');
    return [file, { json, watchdogDir, events }];
  }),
);

const events = lines(values.events);
printFailures(report, events);
const stopped = lines(values.stopped);
let passed = report.numPassedTests;
let failed = report.numFailedTests;
for (const last of stopped) {
  console.log(`hung, stopped by the watchdog (test-results/watchdog); last event: ${last}`);
  const file = fileOfEvent(last);
  const rerun = file && reruns.get(file);
  const { again, hungAgain, clean } = rerun ? secondRun(rerun) : {};
  if (!again) {
    failed += 1;
    continue;
  }
  // The file's results are those of its run alone.
  passed += again.numPassedTests - countIn(report, file, 'passed');
  // Not clean with nothing counted (vitest's own failure) still fails the run once.
  if (!clean) failed += Math.max(1, again.numFailedTests + hungAgain);
  console.log(
    clean
      ? `  run again alone, it passed (${again.numPassedTests} tests): a hang that did not repeat; its stacks are kept above and in test-results/watchdog`
      : `  run again alone, it did not pass: ${again.numFailedTests} failed, ${hungAgain} hung again`,
  );
}
// The Chromium test files run again alone after a failure (the others in --reruns are hung files).
const hungFiles = new Set(stopped.map(fileOfEvent));
for (const [file, rerun] of reruns) {
  if (hungFiles.has(file)) continue;
  const { again, hungAgain, clean } = secondRun(rerun);
  if (!clean) {
    console.log(
      `${file} failed; run again alone, it did not pass: ` +
        (again ? `${again.numFailedTests} failed, ${hungAgain} hung` : 'no report') +
        (again && again.success === false && again.numFailedTests === 0
          ? ' (the file itself failed: a hook or its loading; see its output above)'
          : ''),
    );
    continue;
  }
  // The file's results are those of its run alone; its first failure stays printed above.
  passed += again.numPassedTests - countIn(report, file, 'passed');
  failed -= countIn(report, file, 'failed');
  console.log(
    `${file} failed; run again alone, it passed (${again.numPassedTests} tests): a failure that did not repeat, its error is above`,
  );
}
// A file that failed with no failed test (a hook, or its loading) is one failure, unless it hung: the
// watchdog's count has it.
const fileFailures = report.testResults.filter(
  (r) =>
    r.status === 'failed' &&
    !r.assertionResults.some((a) => a.status === 'failed') &&
    !hungFiles.has(relative(process.cwd(), resolve(r.name))),
);
for (const r of fileFailures) {
  console.log(
    `failed: ${relative(process.cwd(), resolve(r.name))} (the file itself: ${r.message || 'no message'})`,
  );
  failed += 1;
}
const runEnd = events.findLast((event) => event.split(' ')[1] === 'run-end');
const unhandled = Number(/ run-end (\d+) unhandled errors$/.exec(runEnd ?? '')?.[1] ?? 0);
if (unhandled > 0) {
  console.log(`vitest reported ${unhandled} unhandled errors (printed in its output above)`);
  failed += unhandled;
}
if (benchFailed) failed += 1;
// A failing exit that none of the above explains (the events were not given, or vitest failed itself).
const explained = report.numFailedTests + stopped.length + fileFailures.length + unhandled > 0;
if (values['tests-status'] !== '0' && !explained) {
  console.log('vitest exited with a failure though no test failed (see its unhandled errors above)');
  failed += 1;
}
if (!benchFailed) passed += 1;
const skipped = report.numPendingTests + (report.numTodoTests || 0);
console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ''));

/**
 * A file's run alone: its report (undefined if it wrote none), how often it hung again, whether it passed
 * clean; its failures are printed, their messages found in that run's own events.
 */
function secondRun({ json, watchdogDir, events }) {
  const again = existsSync(json) ? JSON.parse(readFileSync(json, 'utf8')) : undefined;
  const hungAgain = lines(`${watchdogDir}/stopped.log`).length;
  if (again) printFailures(again, lines(events));
  const clean = !!again && again.numFailedTests === 0 && hungAgain === 0 && again.success !== false;
  return { again, hungAgain, clean };
}

/** How many tests of `file` (relative to the repository) ended as `status` in `run`. */
function countIn(run, file, status) {
  const result = run.testResults.find((r) => relative(process.cwd(), resolve(r.name)) === file);
  return result ? result.assertionResults.filter((a) => a.status === status).length : 0;
}

/**
 * Names each failed test of `run` with the first lines of its error, at most `MAX_FAILURES` of them: a
 * run with many failures has one cause to look at first, and the rest is in vitest's output above.
 */
function printFailures(run, events) {
  const failures = run.testResults.flatMap((file) =>
    file.assertionResults
      .filter((a) => a.status === 'failed')
      .map((a) => ({ file: relative(process.cwd(), resolve(file.name)), test: a.fullName ?? a.title, a })),
  );
  for (const { file, test, a } of failures.slice(0, MAX_FAILURES)) {
    console.log(`failed: ${file} > ${test}`);
    // ANSI colours out; the stack's node_modules frames say nothing of the test.
    let message = stripVTControlCharacters((a.failureMessages ?? []).join('\n'));
    // A timeout's report has a placeholder for its message; the progress events have the message.
    if (message.startsWith('Error: STACK_TRACE_ERROR')) {
      const prefix = ` test-error ${file} > ${[...(a.ancestorTitles ?? []), a.title].join(' > ')}: `;
      const said = events.find((event) => event.includes(prefix));
      if (said)
        message = message.replace('STACK_TRACE_ERROR', said.slice(said.indexOf(prefix) + prefix.length));
    }
    const shown = message
      .split('\n')
      .filter((line) => line.trim() && !/node_modules|node:internal/.test(line));
    for (const line of shown.slice(0, MAX_LINES)) console.log(`  ${line}`);
    if (shown.length > MAX_LINES)
      console.log(`  … ${shown.length - MAX_LINES} more lines in vitest's output above`);
  }
  if (failures.length > MAX_FAILURES)
    console.log(`… and ${failures.length - MAX_FAILURES} more failed tests, named in vitest's output above`);
}
