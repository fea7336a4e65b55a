import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { newId } from '../../core/ids';
import { ChunkLimitExceeded, KnowledgeBaseTooLarge } from '../../core/ingest/errors';
import type {
  CommitOptions,
  CommitResult,
  ExistingDocument,
  KnowledgeBaseStore,
  StagedChunk,
  StagedDocument,
  StagedDocumentWriter,
  Staging,
} from '../../core/ingest/store';
import { codeBytes, writeSignCode } from '../../core/retrieve/signCodes';
import type { Db } from '../open';

const vectorBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

/** True when every byte is 0 (a byte-at-a-time callback over 500,000 × 4 KB would cost seconds). */
function isZeroVector(blob: Buffer): boolean {
  const words =
    blob.byteOffset % 4 === 0 ? new Uint32Array(blob.buffer, blob.byteOffset, blob.length >> 2) : null;
  if (!words) return blob.every((b) => b === 0);
  for (let i = 0; i < words.length; i++) if (words[i] !== 0) return false;
  for (let i = words.length * 4; i < blob.length; i++) if (blob[i] !== 0) return false;
  return true;
}

/** The staged blob as floats (a copy when the blob is not 4-byte aligned). */
function floatsOf(blob: Buffer): Float32Array {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.length >> 2);
  return new Float32Array(new Uint8Array(blob).buffer);
}

/** Page cache of the knowledge base's connection during a commit (negative: KiB), 64 MB. */
const COMMIT_CACHE_KIB = -65_536;

/**
 * Commits of at least this many chunks let FTS5 merge full-text segments 16 at a time instead of 4 (its
 * `automerge` default, restored in the same transaction): fewer merges of ever larger segments while
 * hundreds of thousands of rows go in (docs/performance.md, "sixth pass"). Smaller commits keep the
 * default so an index built by many small ingestions stays compact.
 */
export const BULK_FTS_MIN_CHUNKS = 10_000;
const FTS_DEFAULT_AUTOMERGE = 4;
const FTS_BULK_AUTOMERGE = 16;

/** Keys the store sets on every chunk's metadata (DESIGN §4); they win over the document's own. */
const RESERVED_KEYS = ['source', 'format', 'documentId', 'chunkIndex'] as const;

/** A staged chunk as read back: [chunk_index, text, token_count, content_hash, metadata, reserved, vector]. */
type StagedRow = [number, string, number, string, string, number, Buffer];

/**
 * Staged chunks live in a throw-away SQLite file in the job's work folder: bounded memory for any
 * upload size, and the knowledge base itself is touched only by the final commit.
 */
class SqliteStaging implements Staging {
  private readonly db: Database.Database;
  private readonly file: string;
  private readonly insertDoc: Database.Statement;
  private readonly insertChunk: Database.Statement;
  private readonly finishDoc: Database.Statement;
  private readonly dropChunks: Database.Statement;
  private readonly dropDoc: Database.Statement;
  private readonly readChunks: Database.Statement;
  private docs = 0;
  private chunks = 0;
  private disposed = false;

  constructor(workDir: string, nativeBinding?: string) {
    mkdirSync(workDir, { recursive: true });
    this.file = join(workDir, `staging-${newId('s', 8)}.db`);
    this.db = new Database(this.file, nativeBinding ? { nativeBinding } : {});
    // A private scratch file: no journal, no syncs, no lock traffic. 16 KB pages hold a chunk's text and
    // a 1024-d vector in one page (with 4 KB pages every row spills into an overflow chain).
    this.db.pragma('page_size = 16384');
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('locking_mode = EXCLUSIVE');
    // Rows are appended in rowid order (a WITHOUT ROWID table keyed by document would keep these large
    // rows in an index b-tree); `reserved` is 1 when the metadata has a key the commit overrides.
    this.db.exec(`
      CREATE TABLE docs (id INTEGER PRIMARY KEY, source TEXT NOT NULL, format TEXT NOT NULL, content_hash TEXT NOT NULL,
        bytes INTEGER NOT NULL, metadata TEXT NOT NULL, chunk_count INTEGER NOT NULL DEFAULT 0, finished INTEGER NOT NULL DEFAULT 0);
      CREATE TABLE chunks (id INTEGER PRIMARY KEY, doc_id INTEGER NOT NULL, chunk_index INTEGER NOT NULL, text TEXT NOT NULL,
        token_count INTEGER NOT NULL, content_hash TEXT NOT NULL, metadata TEXT NOT NULL, reserved INTEGER NOT NULL,
        vector BLOB NOT NULL);
      CREATE UNIQUE INDEX chunks_doc ON chunks (doc_id, chunk_index);
    `);
    this.insertDoc = this.db.prepare(
      `INSERT INTO docs (source, format, content_hash, bytes, metadata) VALUES (?, ?, ?, ?, ?)`,
    );
    this.insertChunk = this.db
      .prepare(`INSERT INTO chunks (doc_id, chunk_index, text, token_count, content_hash,
      metadata, reserved, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
    this.finishDoc = this.db.prepare(
      `UPDATE docs SET finished = 1, chunk_count = ?, metadata = coalesce(?, metadata) WHERE id = ?`,
    );
    this.dropChunks = this.db.prepare(`DELETE FROM chunks WHERE doc_id = ?`);
    this.dropDoc = this.db.prepare(`DELETE FROM docs WHERE id = ?`);
    this.readChunks = this.db
      .prepare(
        `SELECT chunk_index, text, token_count, content_hash, metadata, reserved, vector FROM chunks
        WHERE doc_id = ? ORDER BY chunk_index`,
      )
      .raw();
  }

  get documentCount() {
    return this.docs;
  }
  get chunkCount() {
    return this.chunks;
  }

  open(document: StagedDocument): StagedDocumentWriter {
    const { lastInsertRowid } = this.insertDoc.run(
      document.source,
      document.format,
      document.contentHash,
      document.bytes,
      JSON.stringify(document.metadata),
    );
    const docId = Number(lastInsertRowid);
    let next = 0;
    const addBatch = this.db.transaction((batch: StagedChunk[]) => {
      for (const c of batch) {
        const reserved = RESERVED_KEYS.some((key) => Object.hasOwn(c.metadata, key)) ? 1 : 0;
        this.insertChunk.run(
          docId,
          next++,
          c.text,
          c.tokenCount,
          c.contentHash,
          JSON.stringify(c.metadata),
          reserved,
          vectorBlob(c.vector),
        );
      }
    });
    return {
      add: (batch) => addBatch(batch),
      finish: (metadata) => {
        this.finishDoc.run(next, metadata ? JSON.stringify(metadata) : null, docId);
        this.docs++;
        this.chunks += next;
      },
      discard: () => {
        this.dropChunks.run(docId);
        this.dropDoc.run(docId);
      },
    };
  }

  finishedDocuments() {
    return this.db.prepare(`SELECT * FROM docs WHERE finished = 1 ORDER BY source`).all() as {
      id: number;
      source: string;
      format: string;
      content_hash: string;
      bytes: number;
      metadata: string;
      chunk_count: number;
    }[];
  }

  chunksOf(docId: number) {
    return this.readChunks.iterate(docId) as IterableIterator<StagedRow>;
  }

  dispose() {
    if (this.disposed) return;
    this.disposed = true;
    this.db.close();
    rmSync(this.file, { force: true });
  }
}

/**
 * The stored metadata of a chunk: the staged JSON with the reserved keys set. Equal to
 * `JSON.stringify({ ...JSON.parse(staged), ...reserved })`; when the staged metadata has none of the
 * reserved keys, that is the staged text with the keys appended, without parsing it again.
 */
function chunkMetadata(
  staged: string,
  hasReserved: boolean,
  doc: { source: string; format: string; documentId: string },
  suffix: string,
  chunkIndex: number,
): string {
  if (hasReserved) {
    return JSON.stringify({
      ...(JSON.parse(staged) as Record<string, unknown>),
      source: doc.source,
      format: doc.format,
      documentId: doc.documentId,
      chunkIndex,
    });
  }
  return (staged === '{}' ? '{' : `${staged.slice(0, -1)},`) + suffix + chunkIndex + '}';
}

export class SqliteKnowledgeBaseStore implements KnowledgeBaseStore {
  constructor(
    private readonly db: Db,
    private readonly nativeBinding?: string,
  ) {}

  documents(listingId: string): ExistingDocument[] {
    const rows = this.db
      .prepare(
        `SELECT id, source, content_hash, chunk_count, bytes, metadata FROM documents WHERE listing_id = ? ORDER BY source`,
      )
      .all(listingId) as {
      id: string;
      source: string;
      content_hash: string;
      chunk_count: number;
      bytes: number;
      metadata: string;
    }[];
    return rows.map((r) => ({
      id: r.id,
      source: r.source,
      contentHash: r.content_hash,
      chunkCount: r.chunk_count,
      bytes: r.bytes,
      metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    }));
  }

  createStaging(workDir: string): Staging {
    return new SqliteStaging(workDir, this.nativeBinding);
  }

  /** The sqlite-vec table holding a listing's vectors for one model, created on first use. */
  vectorTable(listingId: string, model: string, dimensions: number): string {
    const found = this.db
      .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ? AND model = ?`)
      .get(listingId, model) as { table_name: string } | undefined;
    if (found) return found.table_name;
    const table = `vec_${newId('', 12).slice(1).toLowerCase()}`;
    if (!Number.isInteger(dimensions) || dimensions <= 0) throw new Error(`invalid dimensions ${dimensions}`);
    this.db.exec(
      `CREATE VIRTUAL TABLE ${table} USING vec0(embedding float[${dimensions}] distance_metric=cosine)`,
    );
    this.db
      .prepare(`INSERT INTO vector_indexes (listing_id, model, dimensions, table_name) VALUES (?, ?, ?, ?)`)
      .run(listingId, model, dimensions, table);
    return table;
  }

  commit(listingId: string, staging: Staging, options: CommitOptions): CommitResult {
    if (!(staging instanceof SqliteStaging)) throw new Error('staging from another store');
    const run = this.db.transaction((): CommitResult => {
      const table = this.vectorTable(listingId, options.model, options.dimensions);
      const findDoc = this.db.prepare(`SELECT id FROM documents WHERE listing_id = ? AND source = ?`);
      const dropVectors = this.db.prepare(
        `DELETE FROM ${table} WHERE rowid IN (SELECT id FROM chunks WHERE document_id = ?)`,
      );
      const dropDoc = this.db.prepare(`DELETE FROM documents WHERE id = ?`);
      const insertDoc = this.db
        .prepare(`INSERT INTO documents (id, listing_id, source, format, content_hash, bytes, metadata,
        chunk_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      const insertChunk = this.db
        .prepare(`INSERT INTO chunks (listing_id, document_id, chunk_index, text, token_count,
        content_hash, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`);
      // Full-text rows of a document's chunks in one statement once they are all in (migration 7).
      const indexText = this.db.prepare(
        `INSERT INTO chunks_fts (rowid, text) SELECT id, text FROM chunks WHERE document_id = ?`,
      );
      const insertVector = this.db.prepare(`INSERT INTO ${table} (rowid, embedding) VALUES (?, ?)`);
      // Next to vec0: the float blob by chunk id (fast point reads for rescoring) and its sign code.
      const insertFloats = this.db.prepare(
        `INSERT INTO embeddings (chunk_id, model, vector) VALUES (?, ?, ?)`,
      );
      const insertCode = this.db.prepare(
        `INSERT INTO vector_codes (listing_id, model, chunk_id, code) VALUES (?, ?, ?, ?)`,
      );
      const code = Buffer.alloc(codeBytes(options.dimensions));
      const now = new Date().toISOString();
      const documents: CommitResult['documents'] = [];

      for (const doc of staging.finishedDocuments()) {
        const previous = findDoc.get(listingId, doc.source) as { id: string } | undefined;
        if (previous) {
          dropVectors.run(previous.id);
          dropDoc.run(previous.id);
        }
        const documentId = newId('doc');
        insertDoc.run(
          documentId,
          listingId,
          doc.source,
          doc.format,
          doc.content_hash,
          doc.bytes,
          doc.metadata,
          doc.chunk_count,
          now,
          now,
        );
        // The reserved keys of DESIGN §4 win over anything a document says about itself.
        const reserved = { source: doc.source, format: doc.format, documentId };
        const suffix = `"source":${JSON.stringify(doc.source)},"format":${JSON.stringify(doc.format)},"documentId":${JSON.stringify(documentId)},"chunkIndex":`;
        for (const [
          chunkIndex,
          text,
          tokenCount,
          contentHash,
          metadata,
          hasReserved,
          vector,
        ] of staging.chunksOf(doc.id)) {
          const { lastInsertRowid } = insertChunk.run(
            listingId,
            documentId,
            chunkIndex,
            text,
            tokenCount,
            contentHash,
            chunkMetadata(metadata, hasReserved === 1, reserved, suffix, chunkIndex),
          );
          // A zero vector (a text with no word the model knows) has no direction: sqlite-vec would give it
          // a NULL distance that sorts first, so it stays out of the vector index; full-text still finds it.
          if (!isZeroVector(vector)) {
            // sqlite-vec takes only an integer rowid, and better-sqlite3 binds a number as a float.
            const rowid = BigInt(lastInsertRowid);
            insertVector.run(rowid, vector);
            insertFloats.run(rowid, options.model, vector);
            writeSignCode(floatsOf(vector), code);
            insertCode.run(listingId, options.model, rowid, code);
          }
        }
        documents.push({ source: doc.source, documentId, chunks: doc.chunk_count });
      }
      const bulk = staging.chunkCount >= BULK_FTS_MIN_CHUNKS;
      if (bulk) this.setFtsAutomerge(FTS_BULK_AUTOMERGE);
      for (const { documentId } of documents) indexText.run(documentId);
      if (bulk) this.setFtsAutomerge(FTS_DEFAULT_AUTOMERGE);

      const totals = this.db
        .prepare(
          `SELECT count(*) AS docs, coalesce(sum(chunk_count), 0) AS chunks, coalesce(sum(bytes), 0) AS bytes
          FROM documents WHERE listing_id = ?`,
        )
        .get(listingId) as { docs: number; chunks: number; bytes: number };
      if (totals.chunks > options.maxChunks) throw new ChunkLimitExceeded(options.maxChunks, totals.chunks);
      if (options.maxKnowledgeBaseBytes !== null && totals.bytes > options.maxKnowledgeBaseBytes) {
        throw new KnowledgeBaseTooLarge(totals.bytes, options.maxKnowledgeBaseBytes);
      }
      this.db
        .prepare(`UPDATE listings SET document_count = ?, chunk_count = ?, updated_at = ? WHERE id = ?`)
        .run(totals.docs, totals.chunks, now, listingId);
      return { documents, documentCount: totals.docs, chunkCount: totals.chunks };
    });
    // The commit writes every page of the new chunks, their full-text postings and vectors: a larger page
    // cache for its duration keeps SQLite from spilling pages to the WAL in the middle of the transaction.
    const cacheSize = this.db.pragma('cache_size', { simple: true }) as number;
    this.db.pragma(`cache_size = ${COMMIT_CACHE_KIB}`);
    try {
      return run.immediate();
    } finally {
      this.db.pragma(`cache_size = ${cacheSize}`);
    }
  }

  /**
   * FTS5's `automerge` of chunks_fts: a row of its config table, so it follows the transaction. FTS5 takes
   * the value only as a literal ("SQL logic error" when bound).
   */
  private setFtsAutomerge(segments: number): void {
    if (!Number.isInteger(segments)) throw new Error(`automerge ${segments}`);
    this.db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', ${segments})`);
  }
}
