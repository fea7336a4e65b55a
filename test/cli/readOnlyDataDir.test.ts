import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_FILE } from '../../src/db/open';
import { openServices } from '../../src/db/services';
import { BIN } from '../helpers/cli';
import { tempDir } from '../helpers/studio';

/**
 * Reading commands on a data directory this user may read but not write. Root writes whatever the
 * modes say: as root, the CLI runs as `nobody` on a data directory that user owns (as the unreadable
 * file case of ingest.test.ts); any other user meets the modes as they are.
 */
const asRoot = process.getuid?.() === 0;
const NOBODY = { uid: 65534, gid: 65534 };
const dir = tempDir();
afterAll(() => {
  execFileSync('chmod', ['-R', 'u+w', dir.path]);
  dir.remove();
});

/** A data directory holding a database with a listing, owned by the user the CLI runs as. */
function seededDataDir(name: string): string {
  const data = join(dir.path, name);
  mkdirSync(data);
  const services = openServices(data);
  services.listings.create(
    { title: 'Kept', accessModel: 'one_time', price: 0 },
    services.wallets.defaultWallet().address,
  );
  services.close();
  if (asRoot) {
    // The test's temporary folder is root's (mode 700): `nobody` must be able to pass through it.
    chmodSync(dir.path, 0o711);
    execFileSync('chown', ['-R', `${NOBODY.uid}:${NOBODY.gid}`, data]);
  }
  return data;
}

async function kbstudio(data: string, ...args: string[]) {
  return promisify(execFile)(process.execPath, [BIN, '--data-dir', data, ...args], {
    env: { ...process.env, HOME: dir.path },
    ...(asRoot ? NOBODY : {}),
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

describe.skipIf(process.platform === 'win32')('reading commands on a read-only data directory', () => {
  it('a directory of mode 555: refused as forbidden, naming the directory, not an internal error', async () => {
    const data = seededDataDir('dir-555');
    chmodSync(data, 0o555);
    const json = await kbstudio(data, '--json', 'listings', 'list');
    expect(json.code).toBe(1);
    expect(json.stderr).toBe('');
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: 'forbidden',
      status: 403,
      message: expect.stringMatching(
        new RegExp(
          `^The data directory ${data} cannot be written \\(.+\\)\\. Make it writable for this user, or choose another data directory \\(--data-dir or KBSTUDIO_DATA_DIR\\)\\.$`,
        ),
      ),
      requestId: expect.stringMatching(/^req_/),
    });
  }, 60_000);

  it('a database file of mode 444: refused naming the file, leaving no read-only -wal or -shm behind', async () => {
    const data = seededDataDir('file-444');
    const file = join(data, DATABASE_FILE);
    chmodSync(file, 0o444);
    const run = await kbstudio(data, '--json', 'keys', 'list');
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining(
        `The data directory ${data} cannot be written (EACCES: permission denied, access '${file}')`,
      ),
    });
    // SQLite, opening the file read-only, made them with its mode 444: they kept the database
    // unwritable after its own mode was restored.
    expect(existsSync(`${file}-wal`)).toBe(false);
    expect(existsSync(`${file}-shm`)).toBe(false);
  }, 60_000);
});
