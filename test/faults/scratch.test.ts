import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/core/errors';
import { claimScratch, releaseScratch, sharedWithLiveProcess } from '../../src/core/uploads/scratch';
import { openServices } from '../../src/db/services';
import { DataDirNotWritable, DiskFull, storageFailure } from '../../src/core/uploads/storageErrors';
import { tempDir } from '../helpers/studio';

const dir = tempDir('kbs-scratch-');
afterAll(() => dir.remove());

/** A PID that existed and has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid!;

function leftovers(scratch: string): void {
  mkdirSync(join(scratch, 'upl_abc', 'nested'), { recursive: true });
  writeFileSync(join(scratch, 'upl_abc', 'nested', 'big.zip'), 'x');
  mkdirSync(join(scratch, 'job_def'), { recursive: true });
  writeFileSync(join(scratch, 'job_def', 'staging-1.db'), 'x');
}

describe('claimScratch', () => {
  it('removes what dead processes left, and marks this process as a user of the folder', () => {
    const scratch = join(dir.path, 'a', 'tmp');
    leftovers(scratch);
    mkdirSync(join(scratch, '.owners'), { recursive: true });
    writeFileSync(join(scratch, '.owners', String(deadPid())), '');
    expect(claimScratch(scratch)).toBe(2);
    expect(readdirSync(scratch)).toEqual(['.owners']);
    expect(readdirSync(join(scratch, '.owners'))).toEqual([String(process.pid)]);
  });

  it('keeps everything while another live process uses the folder', async () => {
    const scratch = join(dir.path, 'b', 'tmp');
    leftovers(scratch);
    const other = spawn('sleep', ['30']);
    try {
      mkdirSync(join(scratch, '.owners'), { recursive: true });
      writeFileSync(join(scratch, '.owners', String(other.pid)), '');
      expect(sharedWithLiveProcess(scratch)).toBe(true);
      expect(claimScratch(scratch)).toBe(0);
      expect(existsSync(join(scratch, 'upl_abc', 'nested', 'big.zip'))).toBe(true);
      expect(existsSync(join(scratch, 'job_def', 'staging-1.db'))).toBe(true);
    } finally {
      other.kill('SIGKILL');
    }
    await new Promise((resolve) => other.once('exit', resolve));
    expect(sharedWithLiveProcess(scratch)).toBe(false);
  });
});

describe('releaseScratch', () => {
  it('takes this process off the folder with its last claim, and the services release theirs on close', () => {
    const scratch = join(dir.path, 'c', 'tmp');
    const owners = () => readdirSync(join(scratch, '.owners'));
    claimScratch(scratch);
    claimScratch(scratch);
    releaseScratch(scratch);
    expect(owners()).toEqual([String(process.pid)]);
    releaseScratch(scratch);
    expect(owners()).toEqual([]);
    releaseScratch(scratch); // one release too many changes nothing
    expect(owners()).toEqual([]);

    // A data directory's services, opened and closed in a process that goes on (a test process running
    // the CLI in process): other processes took it for a live one still using the data directory, and
    // would leave its kept sources, interrupted jobs and scratch files alone.
    const dataDir = join(dir.path, 'd');
    const first = openServices(dataDir);
    const second = openServices(dataDir);
    first.close();
    first.close(); // twice: the second call gives back nothing more
    expect(readdirSync(join(dataDir, 'tmp', '.owners'))).toEqual([String(process.pid)]);
    second.close();
    expect(readdirSync(join(dataDir, 'tmp', '.owners'))).toEqual([]);
  });
});

describe('storageFailure', () => {
  const fsError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('names a full disk and the data directory', () => {
    for (const err of [
      fsError('ENOSPC', 'ENOSPC: no space left on device, write'),
      fsError('SQLITE_FULL', 'database or disk is full'),
    ]) {
      const failure = storageFailure(err, '/data/kb');
      expect(failure).toBeInstanceOf(DiskFull);
      expect(failure!.message).toMatch(
        /^The disk is full: no space is left for the data directory \/data\/kb\./,
      );
    }
  });

  it('names a data directory that cannot be written, with the cause once', () => {
    const failure = storageFailure(
      fsError('EACCES', "EACCES: permission denied, open '/data/kb/x'"),
      '/data/kb',
    );
    expect(failure).toBeInstanceOf(DataDirNotWritable);
    expect(failure!.message).toBe(
      "The data directory /data/kb cannot be written (EACCES: permission denied, open '/data/kb/x'). Make it writable for this user, or choose another data directory.",
    );
    expect(
      storageFailure(fsError('SQLITE_READONLY', 'attempt to write a readonly database'), '/d')!.message,
    ).toContain('(SQLITE_READONLY: attempt to write a readonly database)');
  });

  it('leaves other errors, and domain errors, alone', () => {
    expect(storageFailure(fsError('ECONNRESET', 'socket hang up'), '/d')).toBeUndefined();
    expect(storageFailure(new DomainError('invalid_document', 'x.md: bad'), '/d')).toBeUndefined();
    expect(storageFailure('a string', '/d')).toBeUndefined();
  });
});
