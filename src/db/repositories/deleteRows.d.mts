import type BetterSqlite3 from 'better-sqlite3';

/** A `documents` row as SQLite returns it (snake_case columns). */
export interface DocumentRow {
  id: string;
  listing_id: string;
  source: string;
  format: string;
  content_hash: string;
  bytes: number;
  chunk_count: number;
  document_count: number;
  metadata: string;
  created_at: string;
  updated_at: string;
}

/** What deleteDocumentRows removed: the document's row, and its listing's totals after. */
export interface DeletedDocumentRows {
  row: DocumentRow;
  documentCount: number;
  chunkCount: number;
}

/**
 * Removes a document with its chunks, full-text rows, vectors, float blobs and sign codes, and updates
 * its listing's counters (deleteRows.mjs). Call it inside a write transaction; undefined when there
 * is no such document.
 */
export declare function deleteDocumentRows(
  db: BetterSqlite3.Database,
  id: string,
  now: string,
  options?: DeletionOptions,
): DeletedDocumentRows | undefined;

/**
 * How a deletion removes its rows from the vector and full-text indexes. `rebuildIndexes` (default true):
 * an index is made again from the rows kept when at least as many rows go as stay; false: row by row.
 */
export interface DeletionOptions {
  rebuildIndexes?: boolean;
}

/** Removes a listing with its whole knowledge base (deleteRows.mjs); whether there was one. */
export declare function deleteListingRows(
  db: BetterSqlite3.Database,
  id: string,
  options?: DeletionOptions,
): boolean;

/** What deleteDraftListingRows did: a published listing is left as it is. */
export type DraftListingDeletion = 'deleted' | 'published' | 'missing';

/** Removes a listing with its knowledge base only while it is a draft (deleteRows.mjs). */
export declare function deleteDraftListingRows(
  db: BetterSqlite3.Database,
  id: string,
  options?: DeletionOptions,
): DraftListingDeletion;
