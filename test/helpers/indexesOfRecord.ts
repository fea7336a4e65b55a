import { expect } from 'vitest';
import type { StudioServices } from '../../src/db/services';

type Db = StudioServices['db'];

/** The vec0 table of a listing (its vector_indexes row; these tests use one model). */
export const vectorTableOf = (db: Db, listingId: string): string =>
  db.prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`).pluck().get(listingId) as string;

/**
 * Every vector in the listing's vec0 table, as (rowid, bytes), equals the float blobs of record: the same
 * chunks, the same bytes.
 */
export function expectVectorsOfRecord(db: Db, listingId: string): void {
  const table = vectorTableOf(db, listingId);
  const indexed = db.prepare(`SELECT rowid AS id, embedding FROM ${table} ORDER BY rowid`).all();
  const ofRecord = db
    .prepare(
      `SELECT e.chunk_id AS id, e.vector AS embedding FROM embeddings e JOIN chunks c ON c.id = e.chunk_id
       WHERE c.listing_id = ? ORDER BY e.chunk_id`,
    )
    .all(listingId);
  expect(indexed).toEqual(ofRecord);
}

/** The full-text delete trigger's row in the schema: a new rowid once dropped and made again. */
export const fullTextTriggerRow = (db: Db) =>
  db.prepare(`SELECT rowid, sql FROM sqlite_master WHERE name = 'chunks_fts_delete'`).get() as {
    rowid: number;
    sql: string;
  };

/** FTS5 checks its index against the chunks table (the content table), as `rank` 1 asks; throws if not. */
export function checkFullText(db: Db): void {
  db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`);
}
