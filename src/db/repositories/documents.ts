import { NotFound } from '../../core/errors';
import { hasSearchableWord } from '../../shared/searchWords';
import type { Db } from '../open';
import { deleteDocumentRows, type DeletedDocumentRows, type DocumentRow } from './deleteRows.mjs';

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

/**
 * A document as a knowledge base's list names it: what the studio's list shows of every document. The
 * rest (metadata, content hash, bytes, whether the original file was kept) is read for one document at a
 * time (`get`): for 30,000 documents, whole records made a 13 MB answer that took 404 ms to build.
 */
export interface DocumentListItem {
  id: string;
  source: string;
  format: string;
  chunkCount: number;
  /** As DocumentSummary's: the JSON items a file holds, else 1. */
  documentCount: number;
}

export interface ChunkRecord {
  id: number;
  index: number;
  text: string;
  tokenCount: number;
  metadata: Record<string, unknown>;
}

/**
 * How many chunks matching a search are counted, at least: past it the total is a lower bound. Counting
 * every match of a common word in a 450,000-chunk document took 149 ms at each page.
 */
export const MATCH_COUNT_LIMIT = 10_000;

/** A page of a document's chunks. */
export interface ChunkPage {
  items: ChunkRecord[];
  /** Every chunk of the document, or those matching the search (up to the count's bound). */
  total: number;
  /**
   * `eq`: `total` is exact. `gte`: counting stopped at `total` (MATCH_COUNT_LIMIT, or the end of the
   * page asked for when further), and more chunks match: as Elasticsearch's `hits.total.relation`.
   */
  totalRelation: 'eq' | 'gte';
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

const CHUNK_COLUMNS = 'c.id, c.chunk_index, c.text, c.token_count, c.metadata';

interface ChunkRow {
  id: number;
  chunk_index: number;
  text: string;
  token_count: number;
  metadata: string;
}

const toChunk = (r: ChunkRow): ChunkRecord => ({
  id: r.id,
  index: r.chunk_index,
  text: r.text,
  tokenCount: r.token_count,
  metadata: JSON.parse(r.metadata) as Record<string, unknown>,
});

/** A chunk at one end of a document: its chunk_index and id. */
interface ChunkEnd {
  index: number;
  id: number;
}

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

  /** A knowledge base's documents by source, as its list names them (`get` reads one whole). */
  list(listingId: string): DocumentListItem[] {
    return this.db
      .prepare(
        `SELECT id, source, format, chunk_count AS chunkCount, document_count AS documentCount FROM documents
         WHERE listing_id = ? ORDER BY source`,
      )
      .all(listingId) as DocumentListItem[];
  }

  /** The sources (file names) of a knowledge base's documents. */
  sources(listingId: string): string[] {
    return this.db
      .prepare(`SELECT source FROM documents WHERE listing_id = ? ORDER BY source`)
      .pluck()
      .all(listingId) as string[];
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

  /**
   * A page of a document's chunks in order, or of those matching `q`.
   *
   * Without `q`, the total is the document's `chunk_count` and the page is read from `chunk_index =
   * offset` on, through the (document_id, chunk_index) index: the commit numbers a document's chunks
   * 0..n-1 (commitWorker.mjs: from staging, where each batch continues the last; streamed, one counter
   * per document; a JSON file's chunks are counted over the file, its items' own indexes are metadata),
   * so that row is the one OFFSET would reach. Counting the chunks and walking OFFSET rows took 19 and
   * 22 ms at the end of a 450,000-chunk document, at every page. Should a document not be numbered so
   * (its first and last indexes say so), the page is counted and walked as before.
   *
   * With `q`, the full-text index drives the read, within the document's range of chunk ids: a word
   * the document lacks costs nothing (61 ms when its 450,000 index entries were walked for each search).
   * Within a document, chunk ids ascend with chunk_index (the commit inserts a document's chunks in
   * order in one transaction, and a new rowid is the largest + 1; documents streamed side by side
   * interleave, which the document_id test sorts out), so rowid order is chunk order and needs no sort.
   * Matches are counted up to MATCH_COUNT_LIMIT, or to the end of the page asked for when further.
   */
  chunks(documentId: string, query: ChunkQuery): ChunkPage {
    const chunkCount = this.db
      .prepare(`SELECT chunk_count FROM documents WHERE id = ?`)
      .pluck()
      .get(documentId) as number | undefined;
    if (chunkCount === undefined) throw this.notFound(documentId);
    const q = query.q?.trim();
    const match = q ? ftsQuery(q) : undefined;
    // Text with no word in it matches no chunk, as in /v1/retrieve's lexical search: taken for no
    // search, it listed every chunk as "matching".
    if (q && !match) return { items: [], total: 0, totalRelation: 'eq' };
    const ends = this.ends(documentId);
    if (!ends) return { items: [], total: 0, totalRelation: 'eq' };
    if (match) return this.matchingChunks(documentId, match, ends, query);
    if (ends.first.index !== 0 || ends.last.index !== chunkCount - 1)
      return this.walkedChunks(documentId, query);
    const rows = this.db
      .prepare(
        `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? AND c.chunk_index >= ?
         ORDER BY c.chunk_index LIMIT ?`,
      )
      .all(documentId, query.offset, query.limit) as ChunkRow[];
    return { items: rows.map(toChunk), total: chunkCount, totalRelation: 'eq' };
  }

  /** A document's first and last chunks by chunk_index (two index seeks); undefined when it has none. */
  private ends(documentId: string): { first: ChunkEnd; last: ChunkEnd } | undefined {
    const end = (order: 'ASC' | 'DESC') =>
      this.db
        .prepare(
          `SELECT chunk_index AS "index", id FROM chunks WHERE document_id = ? ORDER BY chunk_index ${order} LIMIT 1`,
        )
        .get(documentId) as ChunkEnd | undefined;
    const first = end('ASC');
    const last = end('DESC');
    return first && last ? { first, last } : undefined;
  }

  private matchingChunks(
    documentId: string,
    match: string,
    { first, last }: { first: ChunkEnd; last: ChunkEnd },
    query: ChunkQuery,
  ): ChunkPage {
    // CROSS JOIN keeps chunks_fts the outer loop: the planner may not start from the chunks.
    const matching = `FROM chunks_fts f CROSS JOIN chunks c ON c.id = f.rowid
      WHERE chunks_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND c.document_id = ?`;
    const args = [match, first.id, last.id, documentId];
    const bound = Math.max(MATCH_COUNT_LIMIT, query.offset + query.limit);
    const counted = this.db
      .prepare(`SELECT count(*) FROM (SELECT 1 ${matching} LIMIT ?)`)
      .pluck()
      .get(...args, bound + 1) as number;
    const rows = this.db
      .prepare(`SELECT ${CHUNK_COLUMNS} ${matching} ORDER BY f.rowid LIMIT ? OFFSET ?`)
      .all(...args, query.limit, query.offset) as ChunkRow[];
    return {
      items: rows.map(toChunk),
      total: Math.min(counted, bound),
      totalRelation: counted > bound ? 'gte' : 'eq',
    };
  }

  /** Every chunk of a document counted, and OFFSET rows walked: for chunks not numbered 0..n-1. */
  private walkedChunks(documentId: string, query: ChunkQuery): ChunkPage {
    const total = this.db
      .prepare(`SELECT count(*) FROM chunks WHERE document_id = ?`)
      .pluck()
      .get(documentId) as number;
    const rows = this.db
      .prepare(
        `SELECT ${CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? ORDER BY c.chunk_index LIMIT ? OFFSET ?`,
      )
      .all(documentId, query.limit, query.offset) as ChunkRow[];
    return { items: rows.map(toChunk), total, totalRelation: 'eq' };
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
