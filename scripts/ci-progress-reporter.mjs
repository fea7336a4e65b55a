// A vitest reporter that appends one line per event (a file queued, started or ended; a test started or
// finished; the run ended, with its count of unhandled errors) to the file named by KBS_CI_PROGRESS.
// scripts/ci-watchdog.mjs reads it to notice a test that has stopped moving and to say which one it is;
// scripts/ci-summary.mjs reads its last line. Without KBS_CI_PROGRESS it does nothing.
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';

export default class CiProgressReporter {
  constructor() {
    this.file = process.env.KBS_CI_PROGRESS;
  }

  onInit(vitest) {
    this.root = vitest.config.root;
  }

  write(event, subject) {
    if (!this.file) return;
    // Appended synchronously: a line must be on disk before a hang can follow it.
    appendFileSync(this.file, `${new Date().toISOString()} ${event} ${subject}\n`);
  }

  path(testModule) {
    return this.root ? relative(this.root, testModule.moduleId) : testModule.moduleId;
  }

  name(testCase) {
    return `${this.path(testCase.module)} > ${testCase.fullName}`;
  }

  onTestModuleQueued(testModule) {
    this.write('queued', this.path(testModule));
  }

  onTestModuleStart(testModule) {
    this.write('file-start', this.path(testModule));
  }

  onTestModuleEnd(testModule) {
    this.write('file-end', `${this.path(testModule)} (${testModule.state()})`);
  }

  onTestCaseReady(testCase) {
    this.write('test-start', this.name(testCase));
  }

  onTestCaseResult(testCase) {
    const result = testCase.result();
    this.write('test-end', `${this.name(testCase)} (${result.state})`);
    // The message's first line: vitest's JSON report gives a timeout only a placeholder stack
    // ("Error: STACK_TRACE_ERROR"), and scripts/ci-summary.mjs prints this instead.
    for (const error of result.errors ?? [])
      this.write('test-error', `${this.name(testCase)}: ${String(error.message ?? '').split('\n')[0]}`);
  }

  // Vitest's JSON report leaves unhandled errors out; scripts/ci-summary.mjs counts them from this line.
  onTestRunEnd(_testModules, unhandledErrors) {
    this.write('run-end', `${unhandledErrors.length} unhandled errors`);
  }
}
