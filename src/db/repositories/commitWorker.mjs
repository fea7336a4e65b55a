// The commit of an ingestion's staged chunks into the knowledge base, run on a worker thread with its own
// connection (SqliteKnowledgeBaseStore.commit starts it). A commit of 500,000 chunks takes a minute or
// more; on the server's thread it stopped every request for that long (docs/performance.md, "seventh
// pass"). Plain JavaScript that imports only packages, so the file runs as it is beside any bundle.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const ROLE = 'kbstudio-commit';

/**
 * FTS5 merges full-text segments `automerge` at a time while rows go in (4 by default). A bulk commit
 * sets request.ftsBulkAutomerge for its full-text rows and sets 4 back in the same transaction.
 */
const FTS_DEFAULT_AUTOMERGE = 4;

/** Bytes of a sign code: whole 256-bit pairs of SIMD blocks. Same as signCodes.ts (pinned by a test). */
const codeBytes = (dimensions) => Math.ceil(dimensions / 256) * 32;

/** Bit i set when component i is positive. Same as signCodes.ts's writeSignCode (pinned by a test). */
function writeSignCode(vector, out) {
  out.fill(0);
  for (let i = 0; i < vector.length; i++) if (vector[i] > 0) out[i >> 3] |= 1 << (i & 7);
}

/** True when every byte is 0 (a byte-at-a-time callback over 500,000 × 4 KB would cost seconds). */
function isZeroVector(blob) {
  if (blob.byteOffset % 4 !== 0) return blob.every((b) => b === 0);
  const words = new Uint32Array(blob.buffer, blob.byteOffset, blob.length >> 2);
  for (let i = 0; i < words.length; i++) if (words[i] !== 0) return false;
  for (let i = words.length * 4; i < blob.length; i++) if (blob[i] !== 0) return false;
  return true;
}

/** The staged blob as floats (a copy when the blob is not 4-byte aligned). */
function floatsOf(blob) {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.length >> 2);
  return new Float32Array(new Uint8Array(blob).buffer);
}

/**
 * The stored metadata of a chunk: the staged JSON with the reserved keys set. Equal to
 * `JSON.stringify({ ...JSON.parse(staged), ...reserved })`; when the staged metadata has none of the
 * reserved keys, that is the staged text with the keys appended, without parsing it again.
 */
function chunkMetadata(staged, hasReserved, doc, suffix, chunkIndex) {
  if (hasReserved) {
    return JSON.stringify({
      ...JSON.parse(staged),
      source: doc.source,
      format: doc.format,
      documentId: doc.documentId,
      chunkIndex,
    });
  }
  return (staged === '{}' ? '{' : `${staged.slice(0, -1)},`) + suffix + chunkIndex + '}';
}

/** A limit the commit would cross: the transaction is rolled back and the caller names the limit. */
class LimitCrossed extends Error {
  constructor(limit, value, max) {
    super(`${limit} ${value} > ${max}`);
    this.limit = { limit, value, max };
  }
}

/** The sqlite-vec table of a listing's vectors for one model, created on first use. */
function vectorTable(db, request) {
  const found = db
    .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ? AND model = ?`)
    .get(request.listingId, request.model);
  if (found) return found.table_name;
  const { dimensions, newVectorTable: table } = request;
  if (!Number.isInteger(dimensions) || dimensions <= 0) throw new Error(`invalid dimensions ${dimensions}`);
  if (!/^vec_[a-z0-9]+$/.test(table)) throw new Error(`invalid vector table name ${table}`);
  db.exec(`CREATE VIRTUAL TABLE ${table} USING vec0(embedding float[${dimensions}] distance_metric=cosine)`);
  db.prepare(
    `INSERT INTO vector_indexes (listing_id, model, dimensions, table_name) VALUES (?, ?, ?, ?)`,
  ).run(request.listingId, request.model, dimensions, table);
  return table;
}

/** FTS5 takes `automerge` only as a literal ("SQL logic error" when bound). */
function setFtsAutomerge(db, segments) {
  if (!Number.isInteger(segments)) throw new Error(`automerge ${segments}`);
  db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', ${segments})`);
}

/**
 * Replaces the staged documents' old versions and inserts the new ones in one transaction of `db`,
 * reading the staging database `staging`; throws LimitCrossed (nothing written) past a limit.
 */
function commitStaged(db, staging, request) {
  const { listingId, model } = request;
  const finished = staging.prepare(`SELECT * FROM docs WHERE finished = 1 ORDER BY source`).all();
  if (finished.length !== request.documentIds.length) {
    throw new Error(`${finished.length} staged documents, ${request.documentIds.length} ids`);
  }
  const readChunks = staging
    .prepare(
      `SELECT chunk_index, text, token_count, content_hash, metadata, reserved, vector FROM chunks
      WHERE doc_id = ? ORDER BY chunk_index`,
    )
    .raw();
  const run = db.transaction(() => {
    const table = vectorTable(db, request);
    const findDoc = db.prepare(`SELECT id FROM documents WHERE listing_id = ? AND source = ?`);
    const dropVectors = db.prepare(
      `DELETE FROM ${table} WHERE rowid IN (SELECT id FROM chunks WHERE document_id = ?)`,
    );
    const dropDoc = db.prepare(`DELETE FROM documents WHERE id = ?`);
    const insertDoc = db.prepare(`INSERT INTO documents (id, listing_id, source, format, content_hash, bytes,
      metadata, chunk_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const insertChunk =
      db.prepare(`INSERT INTO chunks (listing_id, document_id, chunk_index, text, token_count,
      content_hash, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    // Full-text rows of a document's chunks in one statement once they are all in (migration 7).
    const indexText = db.prepare(
      `INSERT INTO chunks_fts (rowid, text) SELECT id, text FROM chunks WHERE document_id = ?`,
    );
    const insertVector = db.prepare(`INSERT INTO ${table} (rowid, embedding) VALUES (?, ?)`);
    // Next to vec0: the float blob by chunk id (fast point reads for rescoring) and its sign code.
    const insertFloats = db.prepare(`INSERT INTO embeddings (chunk_id, model, vector) VALUES (?, ?, ?)`);
    const insertCode = db.prepare(
      `INSERT INTO vector_codes (listing_id, model, chunk_id, code) VALUES (?, ?, ?, ?)`,
    );
    const code = Buffer.alloc(codeBytes(request.dimensions));
    const documents = [];
    let chunkCount = 0;

    finished.forEach((doc, at) => {
      const previous = findDoc.get(listingId, doc.source);
      if (previous) {
        dropVectors.run(previous.id);
        dropDoc.run(previous.id);
      }
      const documentId = request.documentIds[at];
      insertDoc.run(
        documentId,
        listingId,
        doc.source,
        doc.format,
        doc.content_hash,
        doc.bytes,
        doc.metadata,
        doc.chunk_count,
        request.now,
        request.now,
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
      ] of readChunks.iterate(doc.id)) {
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
          insertFloats.run(rowid, model, vector);
          writeSignCode(floatsOf(vector), code);
          insertCode.run(listingId, model, rowid, code);
        }
      }
      chunkCount += doc.chunk_count;
      documents.push({ source: doc.source, documentId, chunks: doc.chunk_count });
    });
    const bulk = chunkCount >= request.bulkFtsMinChunks;
    if (bulk) setFtsAutomerge(db, request.ftsBulkAutomerge);
    for (const { documentId } of documents) indexText.run(documentId);
    if (bulk) setFtsAutomerge(db, FTS_DEFAULT_AUTOMERGE);

    const totals = db
      .prepare(
        `SELECT count(*) AS docs, coalesce(sum(chunk_count), 0) AS chunks, coalesce(sum(bytes), 0) AS bytes
        FROM documents WHERE listing_id = ?`,
      )
      .get(listingId);
    if (totals.chunks > request.maxChunks) throw new LimitCrossed('chunks', totals.chunks, request.maxChunks);
    if (request.maxKnowledgeBaseBytes !== null && totals.bytes > request.maxKnowledgeBaseBytes) {
      throw new LimitCrossed('bytes', totals.bytes, request.maxKnowledgeBaseBytes);
    }
    db.prepare(`UPDATE listings SET document_count = ?, chunk_count = ?, updated_at = ? WHERE id = ?`).run(
      totals.docs,
      totals.chunks,
      request.now,
      listingId,
    );
    return { documents, documentCount: totals.docs, chunkCount: totals.chunks };
  });
  return run.immediate();
}

/**
 * Opens both databases and commits. The commit writes every page of the new chunks, their full-text
 * postings and vectors: a 64 MB page cache keeps SQLite from spilling pages to the WAL in the middle of
 * the transaction. This connection does not checkpoint by itself at the commit (its pages stay in the
 * WAL, where every connection reads them): the caller answers first, then checkpoints.
 */
function openAndCommit(request) {
  const options = request.nativeBinding ? { nativeBinding: request.nativeBinding } : {};
  const db = new Database(request.databaseFile, { ...options, fileMustExist: true });
  try {
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    // Commits are queued one at a time by the store; this waits only for other writers' short
    // transactions (or another process's commit), without blocking the server's thread.
    db.pragma(`busy_timeout = ${request.busyTimeoutMs}`);
    db.pragma(`cache_size = ${request.cacheSizeKib}`);
    db.pragma('wal_autocheckpoint = 0');
    db.loadExtension(request.vecExtension);
    const staging = new Database(request.stagingFile, { ...options, readonly: true, fileMustExist: true });
    try {
      return { db, result: commitStaged(db, staging, request) };
    } finally {
      staging.close();
    }
  } catch (err) {
    db.close();
    throw err;
  }
}

/** What crosses back to the calling thread: errors lose their class on the way, so they are described. */
function describe(err) {
  if (err instanceof LimitCrossed) return { limit: err.limit };
  if (err instanceof Error) return { name: err.name, message: err.message, code: err.code, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

if (!isMainThread && workerData?.role === ROLE) {
  let opened;
  try {
    opened = openAndCommit(workerData.request);
  } catch (err) {
    parentPort.postMessage({ error: describe(err) });
  }
  if (opened) {
    parentPort.postMessage({ result: opened.result });
    // The answer is out; now the WAL's pages go to the database file (up to gigabytes after a bulk
    // import: 10 s of a 500,000-line import's commit), here, where nobody waits for it. PASSIVE: it
    // never blocks readers or writers, and a checkpoint another connection is running wins.
    try {
      opened.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // A full disk, say: the pages stay in the WAL, committed, and a later checkpoint copies them.
    }
    opened.db.close();
  }
}
