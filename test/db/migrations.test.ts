import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE, openDatabase, openDataDir } from '../../src/db/open';
import { LATEST_VERSION, MIGRATIONS } from '../../src/db/migrations';
import { tempDir } from '../helpers/studio';

const dirs: { remove(): void }[] = [];
const fresh = () => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

const tables = (db: ReturnType<typeof openDatabase>) =>
  (
    db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table') ORDER BY name`).all() as {
      name: string;
    }[]
  ).map((r) => r.name);

describe('migrations', () => {
  it('are numbered 1..N without gaps', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('create every table the design needs, in WAL mode, with sqlite-vec loaded', () => {
    const db = openDataDir(fresh());
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const names = tables(db);
    for (const t of [
      'settings',
      'wallets',
      'api_keys',
      'listings',
      'listings_fts',
      'documents',
      'chunks',
      'chunks_fts',
      'embeddings',
      'vector_indexes',
      'embedding_cache',
      'credentials',
      'ledger_entries',
      'query_log',
      'uploads',
      'used_signatures',
    ]) {
      expect(names).toContain(t);
    }
    expect((db.prepare('SELECT vec_version() AS v').get() as { v: string }).v).toMatch(/^v0\.1\./);
    db.close();
  });

  it('upgrade an old database without losing its rows', () => {
    const dir = fresh();
    const file = join(dir, DATABASE_FILE);
    const old = openDatabase(file, { migrateTo: 1 });
    expect(old.pragma('user_version', { simple: true })).toBe(1);
    expect(tables(old)).not.toContain('chunks');
    old
      .prepare(
        `INSERT INTO listings (id, title, access_model, price_lamports, creator_wallet, status, embedding_model,
          dimensions, created_at, updated_at) VALUES ('lst_old', 'Old listing', 'one_time', 5, 'w', 'draft', 'm', 3, 'x', 'x')`,
      )
      .run();
    old.close();

    const upgraded = openDatabase(file);
    expect(upgraded.pragma('user_version', { simple: true })).toBe(LATEST_VERSION);
    const row = upgraded.prepare(`SELECT title, chunk_count FROM listings WHERE id = 'lst_old'`).get();
    expect(row).toEqual({ title: 'Old listing', chunk_count: 0 });
    // The full-text index built by migration 1 still finds the old row.
    expect(
      upgraded.prepare(`SELECT rowid FROM listings_fts WHERE listings_fts MATCH 'old'`).all(),
    ).toHaveLength(1);
    upgraded.close();
  });

  it('refuse a database written by a newer version', () => {
    const dir = fresh();
    const db = openDataDir(dir);
    db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    db.close();
    expect(() => openDataDir(dir)).toThrow(/newer KB Studio/);
  });
});
