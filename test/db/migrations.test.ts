import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE, openDatabase, openDataDir } from '../../src/db/open';
import { LATEST_VERSION, MIGRATIONS } from '../../src/db/migrations';
import { SqliteLedgerRepository } from '../../src/db/repositories/ledger';
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

  it('make each item of the JSON arrays ingested before one document, its chunks named after it (10)', () => {
    const file = join(fresh(), DATABASE_FILE);
    const old = openDatabase(file, { migrateTo: 9 });
    old
      .prepare(
        `INSERT INTO listings (id, title, access_model, price_lamports, creator_wallet, status, embedding_model,
          dimensions, document_count, chunk_count, created_at, updated_at)
         VALUES ('lst_a', 'A', 'one_time', 5, 'w', 'draft', 'm', 3, 2, 6, 'x', 'x')`,
      )
      .run();
    const insertDoc = old.prepare(`INSERT INTO documents (id, listing_id, source, format, content_hash, bytes,
      chunk_count, created_at, updated_at) VALUES (?, 'lst_a', ?, ?, 'h', 10, ?, 'x', 'x')`);
    insertDoc.run('doc_j', 'items.json', 'json', 4);
    insertDoc.run('doc_m', 'notes.md', 'markdown', 2);
    const insertChunk =
      old.prepare(`INSERT INTO chunks (listing_id, document_id, chunk_index, text, token_count,
      content_hash, metadata) VALUES ('lst_a', ?, ?, 't', 1, 'h', ?)`);
    // As the commit wrote them before: the file's id, the place in the file.
    const before = (documentId: string, chunkIndex: number, fields: object) =>
      JSON.stringify({ ...fields, source: 's', format: 'f', documentId, chunkIndex });
    insertChunk.run('doc_j', 0, before('doc_j', 0, { item: 0, name: 'Ada' }));
    insertChunk.run('doc_j', 1, before('doc_j', 1, { item: 2 }));
    insertChunk.run('doc_j', 2, before('doc_j', 2, { item: 2 }));
    insertChunk.run('doc_j', 3, before('doc_j', 3, { item: 5 }));
    insertChunk.run('doc_m', 0, before('doc_m', 0, { headings: ['A'] }));
    insertChunk.run('doc_m', 1, before('doc_m', 1, { item: 7 }));
    old.close();

    const db = openDatabase(file);
    const metadata = db
      .prepare(`SELECT metadata FROM chunks ORDER BY document_id, chunk_index`)
      .pluck()
      .all() as string[];
    expect(metadata.map((m) => JSON.parse(m) as unknown)).toEqual([
      { item: 0, name: 'Ada', source: 's', format: 'f', documentId: 'doc_j.0', chunkIndex: 0 },
      { item: 2, source: 's', format: 'f', documentId: 'doc_j.2', chunkIndex: 0 },
      { item: 2, source: 's', format: 'f', documentId: 'doc_j.2', chunkIndex: 1 },
      { item: 5, source: 's', format: 'f', documentId: 'doc_j.5', chunkIndex: 0 },
      // Other formats are left as they were, even with a field named `item`.
      { headings: ['A'], source: 's', format: 'f', documentId: 'doc_m', chunkIndex: 0 },
      { item: 7, source: 's', format: 'f', documentId: 'doc_m', chunkIndex: 1 },
    ]);
    expect(db.prepare(`SELECT id, document_count FROM documents ORDER BY id`).raw().all()).toEqual([
      ['doc_j', 3],
      ['doc_m', 1],
    ]);
    expect(db.prepare(`SELECT document_count FROM listings`).pluck().get()).toBe(4);
    db.close();
  });

  it("count the ledger entries of earlier versions as the embedded ledger's, its money kept (11)", () => {
    const file = join(fresh(), DATABASE_FILE);
    const old = openDatabase(file, { migrateTo: 10 });
    old
      .prepare(
        `INSERT INTO listings (id, title, access_model, price_lamports, creator_wallet, status, embedding_model,
          dimensions, created_at, updated_at) VALUES ('lst_old', 'Old', 'one_time', 5, 'w', 'published', 'm', 3, 'x', 'x')`,
      )
      .run();
    const entry = old.prepare(`INSERT INTO ledger_entries (instruction, listing_id, wallet, amount_lamports,
      signature, created_at) VALUES (?, 'lst_old', ?, ?, ?, 'x')`);
    entry.run('create_listing', 'w', 0, 'sig1');
    entry.run('purchase_access', 'buyer', 5, 'sig2');
    entry.run('withdraw_earnings', 'w', 2, 'sig3');
    old.prepare(`INSERT INTO listing_earnings VALUES ('lst_old', 5, 2)`).run();
    old.close();

    const db = openDatabase(file);
    const ledger = new SqliteLedgerRepository(db);
    expect(ledger.entries('lst_old').map((e) => [e.instruction, e.ledger])).toEqual([
      ['create_listing', 'local'],
      ['purchase_access', 'local'],
      ['withdraw_earnings', 'local'],
    ]);
    // Not taken for a listing created on chain: its money stays the embedded ledger's books.
    expect(ledger.createdOnChain('lst_old')).toBe(false);
    expect(ledger.earnings('lst_old')).toEqual({ earnedLamports: 5, withdrawnLamports: 2 });
    expect(ledger.signatureUsed('sig2')).toBe(true);
    expect(() =>
      db.prepare(`UPDATE ledger_entries SET ledger = 'other' WHERE signature = 'sig1'`).run(),
    ).toThrow(/CHECK constraint/);
    db.close();
  });

  it("mark the studio's playground keys of earlier versions by their labels, and no other key (12)", () => {
    const file = join(fresh(), DATABASE_FILE);
    const old = openDatabase(file, { migrateTo: 11 });
    const insertKey = old.prepare(`INSERT INTO api_keys (id, key_hash, prefix, label, wallet, created_at)
      VALUES (?, ?, 'kbs_abcd', ?, 'w', 'x')`);
    insertKey.run('key_p', 'h1', 'studio playground');
    insertKey.run('key_b', 'h2', 'studio playground (test buyer)');
    insertKey.run('key_m', 'h3', 'my studio playground');
    insertKey.run('key_n', 'h4', '');
    old.close();

    const db = openDatabase(file);
    expect(db.prepare(`SELECT id, purpose FROM api_keys ORDER BY id`).raw().all()).toEqual([
      ['key_b', 'playground'],
      ['key_m', null],
      ['key_n', null],
      ['key_p', 'playground'],
    ]);
    expect(() => db.prepare(`UPDATE api_keys SET purpose = 'other' WHERE id = 'key_n'`).run()).toThrow(
      /CHECK constraint/,
    );
    db.close();
  });

  it('refuse a database written by a newer version', () => {
    const dir = fresh();
    const db = openDataDir(dir);
    db.pragma(`user_version = ${LATEST_VERSION + 1}`);
    db.close();
    expect(() => openDataDir(dir)).toThrow(/newer KB Studio/);
  });
});
