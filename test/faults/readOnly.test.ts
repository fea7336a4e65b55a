import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, FIXTURES, REPO_ROOT, runCli } from '../helpers/e2e';
import { tempDir } from '../helpers/studio';
import { integrityCheck, seedStudio, snapshot, type Seeded } from './studioProcess';

/**
 * A data directory that cannot be written. Root ignores permission bits, so `chmod -R a-w` is checked
 * as the unprivileged user `nobody` (setpriv); a read-only bind mount is checked as root. Either way
 * `kbstudio serve` and `kbstudio ingest` must stop at once with a message naming the directory.
 */
const run = promisify(execFile);
const NOBODY = 65534;
const dir = tempDir('kbs-readonly-');
const dataDir = join(dir.path, 'data');
const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find(existsSync);
const isRoot = process.getuid?.() === 0;
let seeded: Seeded;
let mounted = false;

beforeAll(async () => {
  seeded = await seedStudio(dataDir);
  await runCli(dataDir, ['ingest', '--listing', seeded.listingId, join(FIXTURES, 'stanley-cups.csv')]);
  // nobody must be able to reach the folder (mkdtemp makes it 0700).
  chmodSync(dir.path, 0o755);
}, 60_000);

afterAll(() => {
  if (mounted) execFileSync('umount', ['-l', dataDir]);
  execFileSync('chmod', ['-R', 'u+w', dir.path]);
  dir.remove();
});

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function kbstudio(args: string[], asNobody: boolean): Promise<Outcome> {
  const argv = [CLI, '--data-dir', dataDir, ...args];
  const [file, fileArgs] = asNobody
    ? [setpriv!, [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', process.execPath, ...argv]]
    : [process.execPath, argv];
  try {
    const { stdout, stderr } = await run(file, fileArgs, { cwd: REPO_ROOT, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as Outcome;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

function expectClearRefusal(outcome: Outcome): void {
  expect(outcome.code).toBe(1);
  expect(outcome.stderr).toContain(`The data directory ${dataDir} cannot be written`);
  // One line for people, no stack trace.
  expect(outcome.stderr.trim().split('\n')).toHaveLength(1);
}

describe('a read-only data directory', () => {
  it.skipIf(!isRoot || !setpriv)(
    'chmod -R a-w: serve and ingest, run as an unprivileged user, fail naming the directory',
    async () => {
      const before = snapshot(dataDir, seeded.listingId);
      execFileSync('chmod', ['-R', 'a-w', dataDir]);
      try {
        const served = await kbstudio(['serve', '--port', '0'], true);
        console.info(`read-only (chmod), serve: exit ${served.code}: ${served.stderr.trim()}`);
        expectClearRefusal(served);
        const ingested = await kbstudio(
          ['ingest', '--listing', seeded.listingId, join(FIXTURES, 'simple.json')],
          true,
        );
        console.info(`read-only (chmod), ingest: exit ${ingested.code}: ${ingested.stderr.trim()}`);
        expectClearRefusal(ingested);
      } finally {
        execFileSync('chmod', ['-R', 'u+w', dataDir]);
      }
      expect(snapshot(dataDir, seeded.listingId)).toEqual(before);
      expect(integrityCheck(dataDir)).toBe('ok');
    },
    60_000,
  );

  it.skipIf(!isRoot)(
    'a read-only bind mount: serve and ingest fail naming the directory, even for root',
    async () => {
      const before = snapshot(dataDir, seeded.listingId);
      mkdirSync(dataDir, { recursive: true });
      execFileSync('mount', ['--bind', dataDir, dataDir]);
      mounted = true;
      execFileSync('mount', ['-o', 'remount,bind,ro', dataDir]);
      const served = await kbstudio(['serve', '--port', '0'], false);
      console.info(`read-only (mount), serve: exit ${served.code}: ${served.stderr.trim()}`);
      expectClearRefusal(served);
      const ingested = await kbstudio(
        ['ingest', '--listing', seeded.listingId, join(FIXTURES, 'simple.json')],
        false,
      );
      expectClearRefusal(ingested);
      execFileSync('umount', [dataDir]);
      mounted = false;
      expect(snapshot(dataDir, seeded.listingId)).toEqual(before);
      expect(integrityCheck(dataDir)).toBe('ok');
    },
    60_000,
  );
});
