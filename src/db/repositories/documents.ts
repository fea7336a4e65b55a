import { NotFound } from '../../core/errors';
import { hasSearchableWord } from '../../shared/searchWords';
import type { Db } from '../open';
import { deleteDocumentRows, type DeletedDocumentRows } from './deleteRows.mjs';

export interface DocumentSummary {
  id: string;
  listingId: string;
  source: string;
  format: string;
  bytes: number;
  chunkCount: number;
  /**
   * How many of the spec's documents it holds: 1, or for a JSON array the items that gave chunks, each
   * shown by the API as document `<id>.<item>` (migration 10).
   */
  documentCount: number;
  /** SHA-256 of the original file: the key of its kept copy in the source store. */
  contentHash: string;
  /** How it was chunked, CSV rows skipped, parser warnings. */
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

export interface ChunkRecord {
  id: number;
  index: number;
  text: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
}

/** A deleted document as it was, and its listing's totals after the deletion. */
export interface DeletedDocument {
  document: DocumentSummary;
  documentCount: number;
  chunkCount: number;
}

/** What a knowledge base holds: its documents, their chunks and their original bytes. */
export interface KnowledgeBaseSize {
  listingId: string;
  documentCount: number;
  chunkCount: number;
  bytes: number;
}

export interface ChunkQuery {
  /**
   * Words to find (full-text, every word must occur); absent or blank = every chunk. Text with no
   * word in it (`"`, `^`) finds nothing.
   */
  q?: string;
  limit: number;
  offset: number;
}

interface DocumentRow {
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

const toSummary = (r: DocumentRow): DocumentSummary => ({
  id: r.id,
  listingId: r.listing_id,
  source: r.source,
  format: r.format,
  bytes: r.bytes,
  chunkCount: r.chunk_count,
  documentCount: r.document_count,
  contentHash: r.content_hash,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/**
 * A free-text search turned into an FTS5 query of quoted terms, so user input is never FTS syntax.
 * Undefined when it holds no word (`_`, `"`, `^`): a term without a letter or digit would be an empty
 * phrase.
 */
export function ftsQuery(q: string): string | undefined {
  const terms = (q.normalize('NFC').match(/[\p{L}\p{N}\p{Co}_]+/gu) ?? []).filter(hasSearchableWord);
  return terms.length ? terms.map((t) => `"${t}"`).join(' ') : undefined;
}

/** The documents of knowledge bases and their chunks, as the studio's Inspect view reads them. */
export class SqliteDocumentRepository {
  constructor(private readonly db: Db) {}

  list(listingId: string): DocumentSummary[] {
    const rows = this.db
      .prepare(`SELECT * FROM documents WHERE listing_id = ? ORDER BY source`)
      .all(listingId) as DocumentRow[];
    return rows.map(toSummary);
  }

  /** The size of every knowledge base that holds documents (listings without any are left out). */
  sizes(): KnowledgeBaseSize[] {
    return this.db
      .prepare(
        `SELECT listing_id AS listingId, sum(document_count) AS documentCount, coalesce(sum(chunk_count), 0) AS chunkCount,
           coalesce(sum(bytes), 0) AS bytes FROM documents GROUP BY listing_id ORDER BY listing_id`,
      )
      .all() as KnowledgeBaseSize[];
  }

  /** The distinct chunking settings a knowledge base's documents were cut with (from their metadata). */
  chunkings(listingId: string): Record<string, unknown>[] {
    const rows = this.db
      .prepare(
        `SELECT DISTINCT coalesce(json_extract(metadata, '$.chunking'), '{}') AS chunking FROM documents
         WHERE listing_id = ?`,
      )
      .pluck()
      .all(listingId) as string[];
    return rows.map((r) => JSON.parse(r) as Record<string, unknown>);
  }

  get(id: string): DocumentSummary {
    const row = this.db.prepare(`SELECT * FROM documents WHERE id = ?`).get(id) as DocumentRow | undefined;
    if (!row) throw this.notFound(id);
    return toSummary(row);
  }

  /**
   * No document `id`. An item of a JSON file (`<file's id>.<item>`, the documentId its chunks carry) is
   * named as such: the studio keeps, shows, re-ingests and deletes the file whole.
   */
  private notFound(id: string): NotFound {
    const item = /^(.+)\.(\d+)$/.exec(id);
    const file =
      item &&
      (this.db
        .prepare(`SELECT source FROM documents WHERE id = ? AND format = 'json'`)
        .pluck()
        .get(item[1]) as string | undefined);
    return new NotFound(
      file
        ? `No document '${id}' on its own: it is item ${item[2]} of the JSON file '${file}' (document '${item[1]}'), which the studio keeps, shows and deletes whole; open '${item[1]}'.`
        : `No document '${id}'.`,
    );
  }

  chunks(documentId: string, query: ChunkQuery): { items: ChunkRecord[]; total: number } {
    this.get(documentId);
    const q = query.q?.trim();
    const match = q ? ftsQuery(q) : undefined;
    // Text with no word in it matches no chunk, as in /v1/retrieve's lexical search: taken for no
    // search, it listed every chunk as "matching".
    if (q && !match) return { items: [], total: 0 };
    const where = match
      ? `c.document_id = ? AND c.id IN (SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?)`
      : `c.document_id = ?`;
    const args = match ? [documentId, match] : [documentId];
    const { total } = this.db
      .prepare(`SELECT count(*) AS total FROM chunks c WHERE ${where}`)
      .get(...args) as {
      total: number;
    };
    const rows = this.db
      .prepare(
        `SELECT c.id, c.chunk_index, c.text, c.token_count, c.metadata FROM chunks c WHERE ${where}
         ORDER BY c.chunk_index LIMIT ? OFFSET ?`,
      )
      .all(...args, query.limit, query.offset) as {
      id: number;
      chunk_index: number;
      text: string;
      token_count: number;
      metadata: string;
    }[];
    return {
      total,
      items: rows.map((r) => ({
        id: r.id,
        index: r.chunk_index,
        text: r.text,
        tokenCount: r.token_count,
        metadata: JSON.parse(r.metadata) as Record<string, unknown>,
      })),
    };
  }

  /**
   * Removes a document with its chunks, their full-text rows (by trigger) and their vectors in every
   * index of the listing, and updates the listing's counters, all in one transaction on this connection.
   * The server deletes on a worker instead (SqliteKnowledgeBaseStore.deleteDocument, then `deleted`).
   */
  delete(id: string): DeletedDocument {
    const deleted = this.db
      .transaction(() => deleteDocumentRows(this.db, id, new Date().toISOString()))
      .immediate();
    return this.deleted(id, deleted);
  }

  /** What a deletion of document `id` removed, as the studio shows it; NotFound when it found none. */
  deleted(id: string, rows: DeletedDocumentRows | undefined): DeletedDocument {
    if (!rows) throw this.notFound(id);
    return { document: toSummary(rows.row), documentCount: rows.documentCount, chunkCount: rows.chunkCount };
  }
}
