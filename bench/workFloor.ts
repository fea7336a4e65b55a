import type Database from 'better-sqlite3';
import { isZeroVector } from '../src/core/embed/embedder';
import { offlineGloveEmbedder } from '../src/core/embed/offlineGlove';
import { countTokens } from '../src/core/ingest/chunkers/tokenizer';
import { EMBED_BATCH } from '../src/core/ingest/pipeline';
import { signCode } from '../src/core/retrieve/signCodes';
import { COMMIT_CACHE_KIB, FTS_BULK } from '../src/db/repositories/knowledgeBase';
import { ScratchStudio } from './ingestRun';
import { median } from './stats';

/**
 * The work an ingestion cannot skip, each part timed alone on this thread, beside the parsers and the
 * commit that ingestFloor.ts times: the store's SQL without staging, the cl100k counts and the offline
 * embeddings of every chunk once. Together they say what the cheapest possible pipeline would cost.
 */

/** A committed chunk as the floor replays it (what ingestFloor.ts reads back from the pipeline's database). */
export interface FloorChunk {
  text: string;
  tokenCount: number;
  contentHash: string;
  /** Without the keys the store sets itself. */
  metadata: Record<string, unknown>;
  vector: Float32Array;
}

export interface FloorDocument {
  source: string;
  format: string;
  contentHash: string;
  bytes: number;
  chunks: FloorChunk[];
}

export interface FloorCorpus {
  model: string;
  dimensions: number;
  documents: FloorDocument[];
}

/**
 * - `design`: what DESIGN.md fixes: chunk rows, their FTS5 index and a sqlite-vec (vec0) index;
 * - `studio`: the studio's schema: also each vector's float blob and sign code, which dense search at
 *   500,000 chunks reads (docs/performance.md, "Dense retrieval at scale").
 */
export type StoreSchema = 'design' | 'studio';

/**
 * Full-text rows are indexed a range at a time once this much text waits, as the commit does
 * (FTS_RANGE_CHARS in commitWorker.mjs, a worker script this thread does not load).
 */
const FTS_RANGE_CHARS = 1 << 20;

interface Row {
  documentId: string;
  chunkIndex: number;
  text: string;
  tokenCount: number;
  contentHash: string;
  metadata: string;
  /** Undefined for a zero vector, which stays out of the vector index as in the commit. */
  blob?: Buffer;
  code?: Uint8Array;
}

/**
 * Inserts every chunk straight from memory into a fresh studio database, in one transaction on this
 * thread, and times it (wall ms): the SQL the commit cannot avoid, without the staging file it reads
 * from and without its per-row JavaScript (rows, metadata and sign codes are made before the clock starts).
 */
export async function timeStoreSql(
  corpus: FloorCorpus,
  schema: StoreSchema,
  { verifyFullText = false } = {},
): Promise<{ ms: number; chunks: number; vectors: number }> {
  const studio = new ScratchStudio();
  try {
    const listingId = studio.newListing();
    const { db } = studio.services;
    // As the commit's connection: its page cache, and no checkpoint at COMMIT (the commit's worker answers
    // first and checkpoints after, untimed); the scratch studio's close checkpoints.
    db.pragma(`cache_size = ${COMMIT_CACHE_KIB}`);
    db.pragma('wal_autocheckpoint = 0');
    db.exec(
      `CREATE VIRTUAL TABLE vec_floor USING vec0(embedding float[${corpus.dimensions}] distance_metric=cosine)`,
    );
    const rows = floorRows(corpus, schema);
    const started = performance.now();
    insertAll(db, listingId, corpus, rows, schema);
    const ms = performance.now() - started;
    const count = (sql: string) => Number(db.prepare(sql).pluck().get(listingId));
    const chunks = count(`SELECT count(*) FROM chunks WHERE listing_id = ?`);
    const vectors = count(
      `SELECT count(*) FROM vec_floor WHERE rowid IN (SELECT id FROM chunks WHERE listing_id = ?)`,
    );
    // A floor that skipped rows would be no floor: every chunk must be in the table, every vector in vec0.
    const expectedVectors = rows.filter((r) => r.blob).length;
    if (chunks !== rows.length || vectors !== expectedVectors) {
      throw new Error(
        `store floor: ${chunks} chunks, ${vectors} vectors; ${rows.length} and ${expectedVectors} expected`,
      );
    }
    // The full-text index has external content (reading chunks_fts reads chunks): only FTS5's own check
    // compares it with the rows. It tokenizes every row again, so the benchmark leaves it to the tests.
    if (verifyFullText) db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`);
    return { ms, chunks, vectors };
  } finally {
    await studio.close();
  }
}

function floorRows(corpus: FloorCorpus, schema: StoreSchema): Row[] {
  const rows: Row[] = [];
  corpus.documents.forEach((doc, at) => {
    const documentId = `doc_floor_${at}`;
    doc.chunks.forEach((chunk, chunkIndex) => {
      const zero = isZeroVector(chunk.vector);
      rows.push({
        documentId,
        chunkIndex,
        text: chunk.text,
        tokenCount: chunk.tokenCount,
        contentHash: chunk.contentHash,
        metadata: JSON.stringify({
          ...chunk.metadata,
          source: doc.source,
          format: doc.format,
          documentId,
          chunkIndex,
        }),
        blob: zero
          ? undefined
          : Buffer.from(chunk.vector.buffer, chunk.vector.byteOffset, chunk.vector.byteLength),
        code: zero || schema === 'design' ? undefined : signCode(chunk.vector),
      });
    });
  });
  return rows;
}

function insertAll(
  db: Database.Database,
  listingId: string,
  corpus: FloorCorpus,
  rows: Row[],
  schema: StoreSchema,
): void {
  const insertDoc = db.prepare(`INSERT INTO documents (id, listing_id, source, format, content_hash, bytes,
    metadata, chunk_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, '{}', ?, ?, ?)`);
  const insertChunk = db.prepare(`INSERT INTO chunks (listing_id, document_id, chunk_index, text, token_count,
    content_hash, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const indexRange = db.prepare(
    `INSERT INTO chunks_fts (rowid, text) SELECT id, text FROM chunks WHERE id BETWEEN ? AND ?`,
  );
  const insertVector = db.prepare(`INSERT INTO vec_floor (rowid, embedding) VALUES (?, ?)`);
  const insertFloats = db.prepare(`INSERT INTO embeddings (chunk_id, model, vector) VALUES (?, ?, ?)`);
  const insertCode = db.prepare(
    `INSERT INTO vector_codes (listing_id, model, chunk_id, code) VALUES (?, ?, ?, ?)`,
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    // The commit's bulk settings for FTS5.
    db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', ${FTS_BULK.automerge})`);
    db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('hashsize', ${FTS_BULK.hashsize})`);
    corpus.documents.forEach((doc, at) => {
      insertDoc.run(
        `doc_floor_${at}`,
        listingId,
        doc.source,
        doc.format,
        doc.contentHash,
        doc.bytes,
        doc.chunks.length,
        now,
        now,
      );
    });
    let first: number | bigint | undefined;
    let last: number | bigint = 0;
    let waiting = 0;
    for (const row of rows) {
      const { lastInsertRowid } = insertChunk.run(
        listingId,
        row.documentId,
        row.chunkIndex,
        row.text,
        row.tokenCount,
        row.contentHash,
        row.metadata,
      );
      if (row.blob) {
        // sqlite-vec takes only an integer rowid, and better-sqlite3 binds a number as a float.
        const rowid = BigInt(lastInsertRowid);
        insertVector.run(rowid, row.blob);
        if (schema === 'studio') {
          insertFloats.run(rowid, corpus.model, row.blob);
          insertCode.run(listingId, corpus.model, rowid, row.code);
        }
      }
      first ??= lastInsertRowid;
      last = lastInsertRowid;
      waiting += row.text.length;
      if (waiting >= FTS_RANGE_CHARS) {
        indexRange.run(first, last);
        first = undefined;
        waiting = 0;
      }
    }
    if (first !== undefined) indexRange.run(first, last);
  })();
}

/** Every chunk's text, in order. */
export const chunkTexts = (corpus: FloorCorpus): string[] =>
  corpus.documents.flatMap((doc) => doc.chunks.map((c) => c.text));

/**
 * The cl100k counts of every chunk's text, once each (wall ms, median of `rounds` after one untimed
 * round): what sizing chunks in tokens (DESIGN.md) costs at least, with the pipeline's counter and its
 * cache of pieces warm. The pipeline counts more than this: pieces while it packs them, then each chunk.
 */
export async function timeTokenCounts(
  texts: string[],
  rounds: number,
): Promise<{ ms: number; tokens: number }> {
  let tokens = 0;
  const ms = await medianOfRounds(rounds, () => {
    let counted = 0;
    for (const text of texts) counted += countTokens(text);
    if (tokens !== 0 && counted !== tokens) throw new Error(`token floor: ${counted} tokens, then ${tokens}`);
    tokens = counted;
  });
  return { ms, tokens };
}

/**
 * The offline model's vectors of every chunk's text, once each, in the pipeline's batches (wall ms,
 * median of `rounds` after one untimed round). No cache: every text is embedded.
 */
export async function timeOfflineEmbeddings(texts: string[], rounds: number): Promise<{ ms: number }> {
  const embedder = offlineGloveEmbedder();
  const ms = await medianOfRounds(rounds, async () => {
    let vectors = 0;
    for (let i = 0; i < texts.length; i += EMBED_BATCH) {
      vectors += (await embedder.embed(texts.slice(i, i + EMBED_BATCH), 'document')).length;
    }
    if (vectors !== texts.length)
      throw new Error(`embedding floor: ${vectors} vectors for ${texts.length} texts`);
  });
  return { ms };
}

/** The median wall time (ms) of `rounds` runs of `work`, after one untimed run that warms it up. */
async function medianOfRounds(rounds: number, work: () => unknown): Promise<number> {
  await work();
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return median(times);
}
