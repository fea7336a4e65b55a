import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/studio';

const WATCHDOG = join(REPO_ROOT, 'scripts/ci-watchdog.mjs');
const VITEST = join(REPO_ROOT, 'node_modules/vitest/vitest.mjs');

interface Run {
  code: number | null;
  output: string;
  seconds: number;
}

const dirs: { remove(): void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

function watchdog(args: string[], onSpawn?: (pid: number) => void): Promise<Run> {
  // The outer vitest's variables would make the inner one think it runs inside a test process.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(VITEST|NODE_OPTIONS|KBS_CI_)/.test(k)),
  );
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WATCHDOG, ...args], {
      cwd: REPO_ROOT,
      env: { ...env, NO_COLOR: '1' },
    });
    if (child.pid) onSpawn?.(child.pid);
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output, seconds: (performance.now() - started) / 1000 }));
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The command the watchdog `pid` runs, which leads a process group of its own. */
function commandOf(pid: number): number | undefined {
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid && Number(pgrp) === Number(name)) return Number(name);
    } catch {
      // Gone while it was read.
    }
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('scripts/ci-watchdog.mjs', () => {
  it('stops test processes that hang where vitest cannot time them out, names them, and lets the run go on', async () => {
    const dir = tempDir('kbs-watchdog-');
    dirs.push(dir);
    const progress = join(dir.path, 'progress.log');
    const reports = join(dir.path, 'reports');
    const run = await watchdog([
      ...['--progress', progress, '--stall', '3', '--limit', '120', '--reports', reports, '--'],
      ...[process.execPath, VITEST, 'run', '--config', 'test/scripts/fixtures/hang/vitest.config.ts'],
      ...['--reporter=default', '--reporter=./scripts/ci-progress-reporter.mjs'],
    ]);

    expect(run.code).toBe(1);
    // The files around the hung ones ran and passed.
    expect(run.output).toMatch(/✓ test\/scripts\/fixtures\/hang\/passes\.hang\.ts/);
    expect(run.output).toMatch(/✓ test\/scripts\/fixtures\/hang\/alsoPasses\.hang\.ts/);
    expect(run.output).toContain('2 passed');
    // Each hung process is stopped once and named by the last event before it stopped moving.
    const stopped = run.output.split('\n').filter((l) => l.includes('stopped a hung test process'));
    expect(stopped).toHaveLength(2);
    expect(stopped.some((l) => /spins\.hang\.ts/.test(l))).toBe(true);
    expect(stopped.some((l) => /queued test\/scripts\/fixtures\/hang\/pending\.hang\.ts/.test(l))).toBe(true);
    expect(run.seconds).toBeLessThan(90);

    // What was learnt about each: the spinning one runs on its main thread; the waiting one idles in
    // its event loop, and its diagnostic report lists the interval that keeps it alive. Each report is
    // found by the test its process was last seen on (the waiting one's main thread can be caught
    // running too, in a timer tick, so its thread states cannot tell them apart).
    const hangs = readdirSync(reports).filter((f) => f.startsWith('hang-'));
    expect(hangs).toHaveLength(2);
    const lines = run.output.split('\n');
    const reportOf = (lastEvent: RegExp) => {
      const at = lines.findIndex((l) => l.includes('stopped a hung test process') && lastEvent.test(l));
      const file = /its threads, stacks and handles: (\S+)/.exec(lines[at + 1] ?? '')?.[1];
      expect(file, `the report of the process last seen on ${lastEvent.source}`).toBeDefined();
      return readFileSync(file!, 'utf8');
    };
    // The gist follows each at the end of the output too, where a CI log's tail keeps it.
    const spinsAt = lines.findIndex((l) => l.includes('stopped a hung test process') && /spins/.test(l));
    expect(lines[spinsAt + 2]).toMatch(/^watchdog: {3}process \d+ \(parent \d+, state R\)/);
    expect(lines[spinsAt + 3]).toMatch(/^watchdog: {5}thread \d+ \S+: state R/);
    const spinning = reportOf(/spins\.hang\.ts/);
    const waiting = reportOf(/pending\.hang\.ts/);
    expect(spinning.split('\n')[1]).toMatch(/^ {2}thread \d+ \S+: state R/);
    expect(spinning).toContain('vitest/dist/workers/forks');
    expect(spinning).toContain('no diagnostic report within 3 s (its event loop is blocked)');
    expect(waiting).toMatch(/^ {2}thread \d+ \S+: state S, wchan do_epoll_wait/m);
    expect(waiting).toMatch(/open handles: \{[^}]*"timer":1/);

    expect(readFileSync(progress, 'utf8')).toMatch(
      /test-end test\/scripts\/fixtures\/hang\/passes\.hang\.ts > passes \(passed\)/,
    );
  }, 120_000);

  it('names each hung file once when test files run two at a time', async () => {
    const dir = tempDir('kbs-watchdog-');
    dirs.push(dir);
    const progress = join(dir.path, 'progress.log');
    const reports = join(dir.path, 'reports');
    const run = await watchdog([
      ...['--progress', progress, '--stall', '5', '--limit', '120', '--reports', reports, '--'],
      ...[
        process.execPath,
        VITEST,
        'run',
        '--config',
        'test/scripts/fixtures/hang/vitest.parallel.config.ts',
      ],
      ...['--reporter=default', '--reporter=./scripts/ci-progress-reporter.mjs'],
    ]);

    expect(run.code).toBe(1);
    expect(run.output).toContain('2 passed');
    // The run's last event can be a file that passed while the other process hung; the list the CI
    // summary and the re-runs read names each hung file by its own last event, and only those.
    const hung = readFileSync(join(reports, 'stopped.log'), 'utf8').trim().split('\n');
    const files = hung.map((l) => /^\S+ \S+ (\S+)/.exec(l)?.[1]).sort();
    expect(files).toEqual([
      'test/scripts/fixtures/hang/pending.hang.ts',
      'test/scripts/fixtures/hang/spins.hang.ts',
    ]);
    expect(readdirSync(reports).filter((f) => f.startsWith('hang-'))).toHaveLength(2);
  }, 120_000);

  it('does not count a pause of the whole run (a suspended machine) as a stall', async () => {
    const dir = tempDir('kbs-watchdog-');
    dirs.push(dir);
    const progress = join(dir.path, 'progress.log');
    let paused: Promise<void> | undefined;
    // The test marks its own start in the progress file (fixtures/pause): the inner vitest passed its
    // events to the reporter late on a loaded CI machine, once not at all for 12 s after the file's
    // start, and the watchdog rightly stopped the test before any pause.
    const run = await watchdog(
      [
        ...[
          '--progress',
          progress,
          '--stall',
          '10',
          '--limit',
          '120',
          '--reports',
          join(dir.path, 'r'),
          '--',
        ],
        ...[process.execPath, VITEST, 'run', '--config', 'test/scripts/fixtures/pause/vitest.config.ts'],
        ...['--reporter=default', '--reporter=./scripts/ci-progress-reporter.mjs'],
      ],
      (pid) => {
        // Once the slow test has started, everything stops for 12 s (longer than the stall), the
        // watchdog included, as in a suspended VM; the test still has about 2 s to go when they all
        // resume.
        paused = (async () => {
          await expect
            .poll(() => existsSync(progress) && readFileSync(progress, 'utf8').includes('fixture-start'), {
              timeout: 60_000,
              interval: 50,
            })
            .toBe(true);
          const group = commandOf(pid);
          expect(group).toBeDefined();
          process.kill(pid, 'SIGSTOP');
          try {
            process.kill(-group!, 'SIGSTOP');
            await sleep(12_000);
          } finally {
            // Whatever happened, nothing is left stopped.
            process.kill(-group!, 'SIGCONT');
            process.kill(pid, 'SIGCONT');
          }
        })();
        // Awaited once the run is over; until then a failure must not count as unhandled.
        paused.catch(() => undefined);
      },
    );
    await paused!.catch((err: Error) => {
      throw new Error(`${err.message}\nthe watchdog's output:\n${run.output}`);
    });
    expect(run.output).toMatch(
      /watchdog: this watchdog ran \d+ s late \(the machine or the run was paused\)/,
    );
    expect(run.output).not.toContain('stopped a hung test process');
    expect(run.output).toContain('1 passed');
    expect(run.code).toBe(0);
  }, 120_000);

  it('stops the whole command at --limit with exit code 124, leaving no process behind', async () => {
    const dir = tempDir('kbs-watchdog-');
    dirs.push(dir);
    const pidFile = join(dir.path, 'pid');
    // A grandchild in the same process group, as a test's server or browser would be; the command
    // itself ignores SIGTERM, as a hung one may, and goes only at the SIGKILL --kill-after later.
    const script = `const c = require('child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(c.pid)); process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);`;
    const run = await watchdog([
      ...['--limit', '2', '--kill-after', '1'],
      '--reports',
      join(dir.path, 'r'),
      '--',
      process.execPath,
      '-e',
      script,
    ]);
    expect(run.code).toBe(124);
    // Said (and the group signalled) once, however long the command takes to go.
    expect(run.output.split('watchdog: the command ran for 2 s; stopping it')).toHaveLength(2);
    expect(run.seconds).toBeLessThan(45);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await expect.poll(() => alive(grandchild), { timeout: 5000 }).toBe(false);
  }, 60_000);

  it("passes the command's output and exit code through", async () => {
    const dir = tempDir('kbs-watchdog-');
    dirs.push(dir);
    // A limit longer than a timer can hold (2^31 - 1 ms) must not stop the command at once.
    const run = await watchdog([
      ...['--limit', '9999999', '--reports', join(dir.path, 'r'), '--'],
      ...[
        process.execPath,
        '-e',
        'setTimeout(() => { console.log("hello from the command"); process.exit(3); }, 300)',
      ],
    ]);
    expect(run.code).toBe(3);
    expect(run.output).toBe('hello from the command\n');
    expect(existsSync(join(dir.path, 'r'))).toBe(true);
  });

  it('refuses a missing command or a bad number with its usage', async () => {
    const run = await watchdog(['--stall', 'soon', '--', 'true']);
    expect(run.code).toBe(2);
    expect(run.output).toContain('--stall must be a number of seconds above 0');
    expect(run.output).toContain('usage: ci-watchdog.mjs');
    const grace = await watchdog(['--kill-after', '0', '--', 'true']);
    expect(grace.code).toBe(2);
    expect(grace.output).toContain('--kill-after must be a number of seconds above 0');
    const none = await watchdog(['--limit', '5']);
    expect(none.code).toBe(2);
    expect(none.output).toContain('no command given');
  });
});
