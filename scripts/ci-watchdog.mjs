#!/usr/bin/env node
// Runs a command for CI and makes sure a hung test cannot hold the run until the CI system's own limit.
//
//   node scripts/ci-watchdog.mjs [--progress FILE] [--stall S] [--limit S] [--kill-after S] [--reports DIR] -- command...
//
// Why: a CI run once printed nothing for 90 minutes after a test file and was cut off, with no clue to
// what hung. Vitest's test and hook timeouts are timers in the test process, so they never fire when
// that process's event loop is blocked. With --progress (written by scripts/ci-progress-reporter.mjs),
// a vitest test process that has not started or finished a test for --stall seconds is examined (its
// threads' kernel states, native stacks when gdb is installed, its JavaScript stack and open handles
// from a Node diagnostic report) and then killed, so vitest reports that file as failed and goes on.
// After --limit seconds the whole command is stopped: SIGTERM, then SIGKILL --kill-after seconds later
// (default 10) for what ignored it. Exit code: the command's, 124 after --limit.
import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    progress: { type: 'string' },
    stall: { type: 'string', default: '300' },
    limit: { type: 'string', default: '1800' },
    'kill-after': { type: 'string', default: '10' },
    reports: { type: 'string', default: 'test-results/watchdog' },
  },
  allowPositionals: true,
});
const [command, ...args] = positionals;
const stallMs = Number(values.stall) * 1000;
const limitMs = Number(values.limit) * 1000;
const killAfterMs = Number(values['kill-after']) * 1000;
const wrong = !command
  ? 'no command given'
  : !(stallMs > 0)
    ? '--stall'
    : !(limitMs > 0)
      ? '--limit'
      : !(killAfterMs > 0)
        ? '--kill-after'
        : undefined;
if (wrong) {
  console.error(wrong.startsWith('--') ? `${wrong} must be a number of seconds above 0` : wrong);
  console.error(
    'usage: ci-watchdog.mjs [--progress FILE] [--stall S] [--limit S] [--kill-after S] [--reports DIR] -- command...',
  );
  process.exit(2);
}
const progress = values.progress ? resolve(values.progress) : undefined;
const reports = resolve(values.reports);
mkdirSync(reports, { recursive: true });
const say = (line) => process.stderr.write(`watchdog: ${line}\n`);

const started = Date.now();
const child = spawn(command, args, {
  stdio: 'inherit',
  // Its own process group, so the whole tree (test processes, their servers and browsers) can be found
  // and stopped.
  detached: true,
  env: {
    ...process.env,
    ...(progress ? { KBS_CI_PROGRESS: progress } : {}),
    // A report on SIGUSR2 gives the JavaScript stack and the open handles of a process whose event
    // loop still runs (a promise nobody settles); nothing happens without the signal.
    NODE_OPTIONS:
      `${process.env.NODE_OPTIONS ?? ''} --report-on-signal --report-directory="${reports}"`.trim(),
  },
});
const group = child.pid;

const stopped = [];
// The test files already named as hung: a killed process's file may never get its end event.
const named = new Set();
let stoppedAtLimit = false;
let lastMove = started;
let examinedStall = false;
const tickMs = Math.min(5000, stallMs / 3);
let lastTick = started;

const timer = setInterval(watch, tickMs);
// The limit has a timer of its own, so it is kept to the second rather than to the next tick. A timer
// longer than 2^31 - 1 ms would fire at once: such a limit (24 days) is as good as none.
const limitTimer = setTimeout(stopAtLimit, Math.min(limitMs, 2 ** 31 - 1));
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => killGroup(signal));

child.on('exit', (code, signal) => {
  clearInterval(timer);
  clearTimeout(limitTimer);
  // Whatever a killed test process left behind (a server, a browser) goes with the run.
  killGroup('SIGKILL');
  // Again at the end, with the gist of what was learnt: CI systems often keep only an output's tail.
  for (const s of stopped) {
    say(`stopped a hung test process after ${values.stall} s without progress; last event: ${s.last}`);
    say(`  its threads, stacks and handles: ${s.details}`);
    for (const line of s.gist.slice(0, 40)) say(`  ${line}`);
  }
  if (stoppedAtLimit) process.exit(124);
  process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});

function stopAtLimit() {
  // Once: what follows only waits for the command to exit.
  clearInterval(timer);
  stoppedAtLimit = true;
  say(`the command ran for ${values.limit} s; stopping it`);
  for (const p of groupProcesses().filter((p) => p.node)) examine(p);
  killGroup('SIGTERM');
  setTimeout(() => killGroup('SIGKILL'), killAfterMs).unref();
}

function watch() {
  const now = Date.now();
  if (!progress) return;
  // A tick far later than its interval means this watchdog did not run either: the machine or the whole
  // run was paused (a suspended VM or container, a stopped process group). Nothing made progress while
  // nothing ran, so that time is not a stall: without this, the first tick after a long pause would stop
  // a test process that was just frozen with everything else.
  const late = now - lastTick - tickMs;
  lastTick = now;
  if (late > stallMs / 2) {
    say(
      `this watchdog ran ${Math.round(late / 1000)} s late (the machine or the run was paused); the stall clock starts again`,
    );
    lastMove = now;
    examinedStall = false;
    return;
  }
  const moved = existsSync(progress) ? statSync(progress).mtimeMs : 0;
  if (moved > lastMove) {
    lastMove = moved;
    examinedStall = false;
  }
  if (now - lastMove < stallMs) return;
  const last = lastEvent();
  const processes = groupProcesses();
  const workers = processes.filter((p) => p.vitestWorker);
  if (workers.length === 0) {
    // Nothing to stop (typecheck, lint and build run before any test process): say it once per stall.
    if (!examinedStall) {
      say(
        `no test progress for ${Math.round((now - lastMove) / 1000)} s and no test process; last event: ${last}`,
      );
      for (const p of processes.filter((p) => p.node)) examine(p);
    }
    examinedStall = true;
    return;
  }
  say(`no test started or finished for ${Math.round((now - lastMove) / 1000)} s; last event: ${last}`);
  // Test files run two at a time, so the run's last event may belong to a file that finished: each
  // hung file is named by its own last event. Which process ran which file is not known here; with one
  // open file, as when one file runs at a time, the pairing is exact.
  const open = openFiles().filter((event) => !named.has(fileOf(event)));
  const hung = open.length > 0 ? open : [last];
  for (const event of hung) named.add(fileOf(event));
  for (const worker of workers) {
    const { file: details, gist } = examine(worker);
    signal(worker.pid, 'SIGKILL');
    stopped.push({ last: hung.join(' | '), details, gist });
  }
  // For the CI summary, one line per hung file: vitest counts no failed test for a file whose process
  // was killed.
  for (const event of hung) appendFileSync(join(reports, 'stopped.log'), `${event}\n`);
  lastMove = Date.now();
}

/** The last event of each test file sent to a test process and not finished, in the order they were sent. */
function openFiles() {
  if (!progress || !existsSync(progress)) return [];
  const open = new Map();
  for (const line of readFileSync(progress, 'utf8').split('\n')) {
    const file = fileOf(line);
    if (!file) continue;
    if (line.split(' ')[1] === 'file-end') open.delete(file);
    else open.set(file, line);
  }
  return [...open.values()];
}

function fileOf(event) {
  return /^\S+ (?:queued|file-start|test-start|test-end|file-end) (\S+)/.exec(event)?.[1];
}

/** The processes of the command's group, from /proc. */
function groupProcesses() {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid, pgrp] = statFields(stat);
      if (Number(pgrp) !== group) continue;
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      const exe = cmdline.split(' ')[0] ?? '';
      found.push({
        pid: Number(name),
        ppid: Number(ppid),
        state,
        cmdline,
        node: /(^|\/)node$/.test(exe),
        vitestWorker: /vitest\/dist\/workers\/forks/.test(cmdline),
      });
    } catch {
      // The process ended while it was being read.
    }
  }
  return found;
}

/** The fields of a /proc stat line after the command name, which may itself hold spaces and parentheses. */
function statFields(stat) {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Writes what can be learnt about a stuck process to a file, prints the gist and returns both. */
function examine(p) {
  const lines = [`process ${p.pid} (parent ${p.ppid}, state ${p.state}): ${p.cmdline.slice(0, 300)}`];
  const report = diagnosticReport(p.pid);
  lines.push(...threadStates(p.pid));
  lines.push(...kernelStack(p.pid));
  const native = nativeStacks(p.pid);
  if (report) lines.push(...report);
  lines.push(...native);
  const file = join(reports, `hang-${p.pid}.txt`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  // The gist: the process, its threads, the main thread's first native frames, the JavaScript stack.
  const gist = [
    ...lines.filter((l) => !l.startsWith('  ') || /^ {2}(thread|open handles|JavaScript stack:)/.test(l)),
    ...mainThreadFrames(native),
    ...(report ?? []).filter((l) => l.startsWith('    at ')).slice(0, 12),
  ];
  for (const line of gist) say(line);
  return { file, gist };
}

function threadStates(pid) {
  const lines = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const read = (what) => {
        try {
          return readFileSync(`/proc/${pid}/task/${tid}/${what}`, 'utf8').trim();
        } catch {
          return '?';
        }
      };
      const stat = read('stat');
      const [state] = statFields(stat);
      const syscall = read('syscall').split(' ')[0];
      lines.push(
        `  thread ${tid} ${read('comm')}: state ${state}, wchan ${read('wchan') || '-'}, syscall ${syscall}`,
      );
    }
  } catch {
    lines.push('  (its threads could not be read)');
  }
  return lines;
}

function kernelStack(pid) {
  try {
    const stack = readFileSync(`/proc/${pid}/stack`, 'utf8').trim().split('\n');
    return ['  kernel stack of the main thread:', ...stack.map((l) => `    ${l}`)];
  } catch {
    return [];
  }
}

function nativeStacks(pid) {
  try {
    const out = execFileSync('gdb', ['-p', String(pid), '-batch', '-nx', '-ex', 'thread apply all bt 20'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 60_000,
    });
    return [
      '  native stacks (gdb):',
      ...out
        .split('\n')
        .filter((l) => /^(Thread|#)/.test(l))
        .map((l) => `    ${l}`),
    ];
  } catch (err) {
    return [`  native stacks: not taken (${err.code === 'ENOENT' ? 'gdb is not installed' : err.message})`];
  }
}

function mainThreadFrames(native) {
  const start = native.findIndex((l) => /^ {4}Thread 1 /.test(l));
  if (start < 0) return [];
  const frames = [];
  for (const line of native.slice(start + 1)) {
    if (!line.startsWith('    #')) break;
    frames.push(line);
  }
  return frames.slice(0, 10);
}

/** Asks the process for a Node diagnostic report; only a process whose event loop runs can write one. */
function diagnosticReport(pid) {
  // SIGUSR2 ends a process that was started without the report flag (its own NODE_OPTIONS).
  if (!reportsOnSignal(pid))
    return ['  JavaScript stack: not asked for (the process has no --report-on-signal)'];
  const before = new Set(readdirSync(reports));
  if (!signal(pid, 'SIGUSR2')) return undefined;
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    const name = readdirSync(reports).find(
      (f) => !before.has(f) && f.includes(`.${pid}.`) && f.endsWith('.json'),
    );
    if (name) {
      try {
        const report = JSON.parse(readFileSync(join(reports, name), 'utf8'));
        const handles = {};
        for (const h of report.libuv ?? []) {
          if (h.is_active && h.is_referenced) handles[h.type] = (handles[h.type] ?? 0) + 1;
        }
        return [
          `  open handles: ${JSON.stringify(handles)}`,
          '  JavaScript stack (diagnostic report):',
          ...(report.javascriptStack?.stack ?? []).map((l) => `    ${l.trim()}`),
        ];
      } catch {
        // Still being written.
      }
    }
    sleepSync(100);
  }
  return ['  JavaScript stack: no diagnostic report within 3 s (its event loop is blocked)'];
}

function reportsOnSignal(pid) {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.some((v) => v.startsWith('NODE_OPTIONS=') && v.includes('--report-on-signal'));
  } catch {
    return false;
  }
}

function signal(pid, name) {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false;
  }
}

function killGroup(name) {
  try {
    process.kill(-group, name);
  } catch {
    // The group is already gone.
  }
}

function lastEvent() {
  if (!progress || !existsSync(progress)) return '(none yet)';
  const lines = readFileSync(progress, 'utf8').trim().split('\n');
  return lines.at(-1) || '(none yet)';
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
