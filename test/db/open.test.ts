import { chmodSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatabaseDamaged, DatabaseLost } from '../../src/core/uploads/storageErrors';
import Database from 'better-sqlite3';
import { LATEST_VERSION } from '../../src/db/migrations';
import { DATABASE_FILE, PAGE_SIZE, openDataDir } from '../../src/db/open';
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

describe('page size', () => {
  it('is 16 KB in a new database, and stays what it was in an existing one', () => {
    expect(PAGE_SIZE).toBe(16384);
    const fresh = openDataDir(join(dir.path, 'pages-new'));
    expect(fresh.pragma('page_size', { simple: true })).toBe(16384);
    fresh.close();

    // A database made before the change: SQLite's default 4 KB pages, in WAL mode, no migration yet.
    const existing = join(dir.path, 'pages-old');
    mkdirSync(existing);
    const old = new Database(join(existing, DATABASE_FILE));
    old.pragma('page_size = 4096');
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE kept (x INTEGER); INSERT INTO kept VALUES (7)');
    old.close();

    const db = openDataDir(existing);
    expect(db.pragma('page_size', { simple: true })).toBe(4096);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
    expect(db.prepare('SELECT x FROM kept').pluck().get()).toBe(7);
    db.close();
  });
});

describe('a database that was lost or damaged', () => {
  it('refuses a 0-byte database beside kept documents, changing nothing', () => {
    const data = join(dir.path, 'lost');
    openDataDir(data).close();
    mkdirSync(join(data, 'sources', 'ab'), { recursive: true });
    writeFileSync(join(data, 'sources', 'ab', 'abcdef.md'), '# Kept');
    truncateSync(join(data, DATABASE_FILE), 0);
    expect(() => openDataDir(data)).toThrow(DatabaseLost);
    expect(() => openDataDir(data)).toThrow(
      `The database ${join(data, DATABASE_FILE)} is empty, yet the data directory keeps 1 original document in sources/`,
    );
    expect(statSync(join(data, DATABASE_FILE)).size).toBe(0);
    expect(readFileSync(join(data, 'sources', 'ab', 'abcdef.md'), 'utf8')).toBe('# Kept');
  });

  it('opens a 0-byte database as new when nothing was kept', () => {
    const data = join(dir.path, 'empty');
    mkdirSync(data);
    writeFileSync(join(data, DATABASE_FILE), '');
    openDataDir(data).close();
    expect(statSync(join(data, DATABASE_FILE)).size).toBeGreaterThan(0);
  });

  it('names a damaged database and says what to do', () => {
    const data = join(dir.path, 'damaged');
    openDataDir(data).close();
    writeFileSync(join(data, DATABASE_FILE), Buffer.alloc(8192, 7));
    expect(() => openDataDir(data)).toThrow(DatabaseDamaged);
    expect(() => openDataDir(data)).toThrow(
      new RegExp(
        `^The database of the data directory ${data} \\(kbstudio\\.db\\) is damaged \\(SQLITE_NOTADB: .*\\)\\. Nothing was changed\\. Restore it`,
      ),
    );
  });
});
