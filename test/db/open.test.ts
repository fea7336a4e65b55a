import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDataDir } from '../../src/db/open';
import { tempDir } from '../helpers/studio';

const dir = tempDir();
afterAll(() => dir.remove());

describe.skipIf(process.platform === 'win32')('openDataDir', () => {
  it('makes a new data directory private to its user, and leaves an existing one as it is', () => {
    const fresh = join(dir.path, 'shared', 'kb-data');
    openDataDir(fresh).close();
    expect(statSync(fresh).mode & 0o777).toBe(0o700);

    const existing = join(dir.path, 'existing');
    mkdirSync(existing);
    chmodSync(existing, 0o755);
    openDataDir(existing).close();
    expect(statSync(existing).mode & 0o777).toBe(0o755);
  });
});
