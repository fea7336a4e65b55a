// The commit of an ingestion into the knowledge base, run on a worker thread with its own connection
// (SqliteKnowledgeBaseStore starts it ahead, beginCommit sends it its request). A commit of 500,000
// chunks takes most of a minute; on the server's thread it stopped every request for that long
// (docs/performance.md, "seventh pass").
// The transaction first copies the documents of the staging database, then takes the documents the
// ingestion streams to it (messages below) while it reads the next lines, and commits when told to.
// Deleting a document, or a draft listing with its knowledge base, runs here too (serveDelete), for
// the same reason.
// Plain JavaScript that imports only packages and deleteRows.mjs beside it, so the file runs as it
// is beside any bundle.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import {
  allChunks,
  deleteDocumentRows,
  deleteDocumentVectors,
  deleteDraftListingRows,
  fullTextDeleteTrigger,
  rebuildFaster,
  withFullTextRemoved,
} from './deleteRows.mjs';

const ROLE = 'kbstudio-commit';

/** No chunk waiting for the full-text index (CommitSession's `unindexed`). */
const noneUnindexed = () => ({ first: undefined, last: undefined, count: 0, chars: 0, documents: new Set() });

/**
 * FTS5 merges full-text segments `automerge` at a time while rows go in (4 by default), and writes a new
 * segment each time its pending terms reach `hashsize` bytes (1 MB by default). Once a commit holds
 * request.bulkFtsMinChunks chunks it sets request.ftsBulk (16 at a time, 8 MB: fewer, larger segments
 * to merge), and the defaults back before it commits.
 */
const FTS_DEFAULTS = { automerge: 4, hashsize: 1024 * 1024 };

/**
 * Full-text rows go in a range of chunk ids at a time, once about this many characters of text wait.
 * FTS5 writes its pending terms out as a new segment whenever another statement of the transaction
 * opens a savepoint (its xSavepoint), which nearly every insert does: indexed a document or a batch at a
 * time, between the chunk inserts, the 10 MB mixed corpus left one small segment per document for FTS5
 * to merge, and the store's work for it took 693 ms; indexed a megabyte at a time, 444 ms
 * (docs/performance.md, fourteenth pass). Larger ranges gained nothing and leave more to index at the end.
 */
const FTS_RANGE_CHARS = 1 << 20;

/** Bytes of a sign code: whole 256-bit pairs of SIMD blocks. Same as signCodes.ts (pinned by a test). */
const codeBytes = (dimensions) => Math.ceil(dimensions / 256) * 32;

/** Bit i set when component i is positive. Same as signCodes.ts's writeSignCode (pinned by a test). */
function writeSignCode(vector, out) {
  out.fill(0);
  for (let i = 0; i < vector.length; i++) if (vector[i] > 0) out[i >> 3] |= 1 << (i & 7);
}

/** True when every component is 0 (a zero vector has no direction). */
function isZeroVector(floats) {
  for (let i = 0; i < floats.length; i++) if (floats[i] !== 0) return false;
  return true;
}

/** A staged blob as floats (a copy when the blob is not 4-byte aligned). */
function floatsOf(blob) {
  if (blob.byteOffset % 4 === 0) return new Float32Array(blob.buffer, blob.byteOffset, blob.length >> 2);
  return new Float32Array(new Uint8Array(blob).buffer);
}

const blobOf = (floats) => Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength);

/**
 * The stored metadata of a chunk: the staged JSON with the reserved keys set. Equal to
 * `JSON.stringify({ ...JSON.parse(staged), ...reserved })`; when the staged metadata has none of the
 * reserved keys, that is the staged text with the keys appended, without parsing it again.
 */
function chunkMetadata(staged, hasReserved, doc, chunkIndex) {
  if (doc.items) return itemChunkMetadata(staged, hasReserved, doc, chunkIndex);
  if (hasReserved) {
    return JSON.stringify({
      ...JSON.parse(staged),
      source: doc.source,
      format: doc.format,
      documentId: doc.documentId,
      chunkIndex,
    });
  }
  return (staged === '{}' ? '{' : `${staged.slice(0, -1)},`) + doc.suffix + chunkIndex + '}';
}

/** The JSON parser's sections start their metadata with the item (parsers/json.ts). */
const ITEM_FIRST = /^\{"item":(\d+)[,}]/;

/**
 * The stored metadata of a chunk of a JSON file: each item of the file is one of the spec's documents
 * (§2), so the chunk names its item's document, `<file's document id>.<item>`, and its place in that
 * item, counted from 0 (migration 10). `item` is set by the JSON parser on every chunk; a file's chunks
 * come item after item. As in chunkMetadata, the keys are appended to the staged text when it starts
 * with the item and has no reserved key: parsing and writing it again took 5 µs a chunk.
 */
function itemChunkMetadata(staged, hasReserved, doc, fileChunkIndex) {
  const first = hasReserved ? null : ITEM_FIRST.exec(staged);
  const metadata = first ? undefined : JSON.parse(staged);
  const item = first ? Number(first[1]) : metadata.item;
  if (!Number.isInteger(item)) throw new Error(`chunk ${fileChunkIndex} of ${doc.source} has no JSON item`);
  const chunkIndex = doc.items.get(item) ?? 0;
  doc.items.set(item, chunkIndex + 1);
  const documentId = `${doc.documentId}.${item}`;
  if (first)
    return `${staged.slice(0, -1)},${doc.keys}${JSON.stringify(documentId)},"chunkIndex":${chunkIndex}}`;
  return JSON.stringify({ ...metadata, source: doc.source, format: doc.format, documentId, chunkIndex });
}

/** How many of the spec's documents a document row holds: its JSON items with chunks, else 1. */
const documentCountOf = (doc) => (doc.items && doc.items.size > 0 ? doc.items.size : 1);

/** A limit the commit would cross: the transaction is rolled back and the caller names the limit. */
class LimitCrossed extends Error {
  constructor(limit, value, max) {
    super(`${limit} ${value} > ${max}`);
    this.limit = { limit, value, max };
  }
}

/**
 * The listing's model is not the commit's (another ingestion or upload stored chunks of another model,
 * or the model was changed, while this one embedded): nothing is written.
 */
class ModelConflict extends Error {
  constructor(listingId, held, model, chunks) {
    super(`listing ${listingId} is of model ${held}, not ${model}`);
    this.modelConflict = { listingId, held, model, chunks };
  }
}

/**
 * Checks, under the write lock, that the listing is of the commit's model (CommitOptions.listingModel).
 * An empty listing of another model takes the commit's with 'take' (an ingestion that asked for it, e.g.
 * an upload's `embedding_model`), at the commit: returns true then. A listing deleted meanwhile is left to
 * the writes that need it.
 */
function takesModel(db, request) {
  if (!request.listingModel) return false;
  const listing = db
    .prepare(`SELECT embedding_model AS model, chunk_count AS chunks FROM listings WHERE id = ?`)
    .get(request.listingId);
  if (!listing || listing.model === request.model) return false;
  if (listing.chunks > 0 || request.listingModel !== 'take') {
    throw new ModelConflict(request.listingId, listing.model, request.model, listing.chunks);
  }
  return true;
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

/** FTS5 takes its settings only as literals ("SQL logic error" when bound). */
function setFtsSettings(db, { automerge, hashsize }) {
  if (!Number.isInteger(automerge) || !Number.isInteger(hashsize))
    throw new Error(`automerge ${automerge}, hashsize ${hashsize}`);
  db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('automerge', ${automerge})`);
  db.exec(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('hashsize', ${hashsize})`);
}

/** A document as the transaction knows it: ids, the reserved metadata keys, what to report. */
function describeDocument(doc, documentId) {
  // The reserved keys appended to a chunk's staged metadata: `keys` up to the document id (a JSON item's
  // own), `suffix` up to the chunk index.
  const keys = `"source":${JSON.stringify(doc.source)},"format":${JSON.stringify(doc.format)},"documentId":`;
  return {
    documentId,
    source: doc.source,
    format: doc.format,
    keys,
    suffix: `${keys}${JSON.stringify(documentId)},"chunkIndex":`,
    chunks: 0,
    /** A JSON file's items, each one document: item → its chunks so far (itemChunkMetadata). */
    items: doc.format === 'json' ? new Map() : undefined,
  };
}

/**
 * One commit's transaction on `db` (BEGIN IMMEDIATE on creation): documents go in whole (from the
 * staging database) or streamed in batches; `commit()` checks the limits and commits, throwing
 * LimitCrossed (nothing written) past one.
 */
class CommitTransaction {
  constructor(db, request) {
    this.db = db;
    this.request = request;
    db.exec('BEGIN IMMEDIATE');
    /** When the write lock was taken: the result says how long it was held (docs/performance.md). */
    this.lockedAt = performance.now();
    this.takesModel = takesModel(db, request);
    const table = vectorTable(db, request);
    // A source arrives composed (NFC); a document stored before names were composed may be decomposed.
    this.findDocs = db.prepare(`SELECT id FROM documents WHERE listing_id = ? AND source IN (?, ?)`);
    this.vectorIndex = db
      .prepare(`SELECT * FROM vector_indexes WHERE listing_id = ? AND model = ?`)
      .get(request.listingId, request.model);
    this.committedChunks = db
      .prepare(`SELECT chunk_count FROM listings WHERE id = ?`)
      .pluck()
      .get(request.listingId);
    this.countChunks = db.prepare(`SELECT count(*) FROM chunks WHERE document_id = ?`).pluck();
    this.dropDoc = db.prepare(`DELETE FROM documents WHERE id = ?`);
    this.insertDoc = db.prepare(`INSERT INTO documents (id, listing_id, source, format, content_hash, bytes,
      metadata, chunk_count, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.nameDoc = db.prepare(`UPDATE documents SET source = ?, chunk_count = ?, metadata = ?,
      content_hash = coalesce(?, content_hash), document_count = ? WHERE id = ?`);
    this.countDocuments = db.prepare(`UPDATE documents SET document_count = ? WHERE id = ?`);
    this.insertChunk =
      db.prepare(`INSERT INTO chunks (listing_id, document_id, chunk_index, text, token_count,
      content_hash, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)`);
    // Full-text rows in one statement per range of new chunks (migration 7; FTS_RANGE_CHARS).
    this.indexRange = db.prepare(
      `INSERT INTO chunks_fts (rowid, text) SELECT id, text FROM chunks WHERE id BETWEEN ? AND ?`,
    );
    this.insertVector = db.prepare(`INSERT INTO ${table} (rowid, embedding) VALUES (?, ?)`);
    // Next to vec0: the float blob by chunk id (fast point reads for rescoring) and its sign code.
    this.insertFloats = db.prepare(`INSERT INTO embeddings (chunk_id, model, vector) VALUES (?, ?, ?)`);
    this.insertCode = db.prepare(
      `INSERT INTO vector_codes (listing_id, model, chunk_id, code) VALUES (?, ?, ?, ?)`,
    );
    this.code = Buffer.alloc(codeBytes(request.dimensions));
    /** Committed documents, in the order they were finished. */
    this.documents = [];
    /** Streamed documents under way, by the caller's key. */
    this.streaming = new Map();
    this.chunks = 0;
    this.bulk = false;
    /** New chunks not in the full-text index yet: ids first..last (consecutive), their text, documents. */
    this.unindexed = noneUnindexed();
    /**
     * A streamed document whose old version, most of the knowledge base, will be dropped by building the
     * indexes again (replaceIndexesAhead): `{ key, fullText }`, or undefined. Until it is finished or
     * discarded, new vectors wait out of the vector index (from chunk id `vectorsFrom` on), and with
     * `fullText` new chunks wait unindexed: those rebuilds take them in at no extra cost.
     */
    this.waiting = undefined;
    /** The first chunk id whose vector waits out of the vector index, or undefined. */
    this.vectorsFrom = undefined;
  }

  /**
   * Replaces the old version of a source, if any (its vectors first: vec0 has no foreign key). `awaited`:
   * the waiting (this.waiting) the new version's rows were kept in for this drop.
   */
  dropSource(source, keep, awaited = undefined) {
    const previous = this.findDocs.all(this.request.listingId, source, source.normalize('NFD'));
    for (const { id } of previous) if (id !== keep) this.drop(id, awaited);
  }

  drop(documentId, awaited = undefined) {
    // A document holding most of the knowledge base (a large import replaced) leaves the vector index
    // faster by building it again from the rest (deleteRows.mjs), and the full-text index too when that
    // costs less than removing its rows one by one; always so for the vector index when the new
    // version's vectors wait for it (the refill inserts them once).
    const chunks = this.countChunks.get(documentId);
    const rebuild = awaited !== undefined || rebuildFaster(chunks, (this.committedChunks ?? 0) + this.chunks);
    const fullText = rebuild && this.fullTextRebuildFaster(chunks);
    // Row by row, its full-text entries are deleted through a trigger: they must be in the index first.
    if (!fullText && this.unindexed.documents.has(documentId)) this.indexUnindexed();
    deleteDocumentVectors(this.db, this.vectorIndex, documentId, rebuild);
    // The refill took every vector of the listing's other chunks, the ones that were waiting included.
    if (rebuild) this.vectorsFrom = undefined;
    withFullTextRemoved(this.db, fullText, () => this.dropDoc.run(documentId));
    // FTS5's rebuild indexed every chunk left in the table, the ones that were waiting included.
    if (fullText) this.unindexed = noneUnindexed();
  }

  /** Puts the vectors that waited (from vectorsFrom on) into the vector index, once the waiting ends. */
  insertWaitingVectors() {
    if (this.vectorsFrom === undefined) return;
    const { table_name: table, listing_id: listingId, model } = this.vectorIndex;
    this.db
      .prepare(
        `INSERT INTO ${table} (rowid, embedding) SELECT e.chunk_id, e.vector FROM chunks c
         JOIN embeddings e ON e.chunk_id = c.id WHERE c.listing_id = ? AND c.id >= ? AND e.model = ?`,
      )
      .run(listingId, this.vectorsFrom, model);
    this.vectorsFrom = undefined;
  }

  /**
   * Whether dropping `chunks` rows is cheaper with the full-text index built again from the chunks left
   * (FTS5's rebuild: each of them indexed) than row by row (the chunks waiting unindexed indexed, then
   * the document's rows removed, each about as costly). Counts the whole table, so only asked for a
   * document that is most of its listing, or whose new version's rows wait for it.
   */
  fullTextRebuildFaster(chunks) {
    if (!fullTextDeleteTrigger(this.db)) return false;
    return chunks > 0 && chunks + this.unindexed.count >= allChunks(this.db) - chunks;
  }

  /**
   * How the old version of `source`, which a streamed document will replace when it is finished, is best
   * dropped then: undefined when row by row; `{ fullText }` when by building the vector index again
   * (most of the listing), and the full-text index too with `fullText`. The new rows need not go into
   * an index that will be built again.
   */
  replaceIndexesAhead(source) {
    const previous = this.findDocs.all(this.request.listingId, source, source.normalize('NFD'));
    let chunks = 0;
    for (const { id } of previous) chunks += this.countChunks.get(id);
    if (!rebuildFaster(chunks, (this.committedChunks ?? 0) + this.chunks)) return undefined;
    return { fullText: this.fullTextRebuildFaster(chunks) };
  }

  /** Inserts a chunk and, unless its vector is zero, the vector, its float blob and sign code; its id. */
  addChunk(doc, chunkIndex, text, tokenCount, contentHash, metadata, hasReserved, floats, blob) {
    const { listingId, model } = this.request;
    const { lastInsertRowid } = this.insertChunk.run(
      listingId,
      doc.documentId,
      chunkIndex,
      text,
      tokenCount,
      contentHash,
      chunkMetadata(metadata, hasReserved, doc, chunkIndex),
    );
    // A zero vector (a text with no word the model knows) has no direction: sqlite-vec would give it
    // a NULL distance that sorts first, so it stays out of the vector index; full-text still finds it.
    if (!isZeroVector(floats)) {
      // sqlite-vec takes only an integer rowid, and better-sqlite3 binds a number as a float.
      const rowid = BigInt(lastInsertRowid);
      if (this.waiting) this.vectorsFrom ??= lastInsertRowid;
      else this.insertVector.run(rowid, blob);
      this.insertFloats.run(rowid, model, blob);
      writeSignCode(floats, this.code);
      this.insertCode.run(listingId, model, rowid, this.code);
    }
    const unindexed = this.unindexed;
    unindexed.first ??= lastInsertRowid;
    unindexed.last = lastInsertRowid;
    unindexed.count++;
    unindexed.chars += text.length;
    unindexed.documents.add(doc.documentId);
    return lastInsertRowid;
  }

  /**
   * Puts the new chunks not indexed yet into the full-text index, in one statement. Chunk ids of one
   * transaction with no other writer are consecutive (a new row takes the largest id + 1), so the range
   * holds exactly those chunks; the count is checked, as a wrong range would corrupt the index.
   */
  indexUnindexed() {
    const unindexed = this.unindexed;
    if (unindexed.count === 0) return;
    const { changes } = this.indexRange.run(unindexed.first, unindexed.last);
    if (changes !== unindexed.count) {
      throw new Error(
        `full-text range ${unindexed.first}..${unindexed.last} holds ${changes} chunks, not ${unindexed.count}`,
      );
    }
    this.unindexed = noneUnindexed();
  }

  /** Indexes the waiting chunks once there are FTS_RANGE_CHARS of text (not while they wait for a rebuild). */
  indexWhenFull() {
    if (!this.waiting?.fullText && this.unindexed.chars >= FTS_RANGE_CHARS) {
      this.indexUnindexed();
    }
  }

  /** Counts chunks in; past the bulk size, full-text segments merge 16 at a time (sixth pass). */
  counted(chunks) {
    this.chunks += chunks;
    if (!this.bulk && this.chunks >= this.request.bulkFtsMinChunks) {
      this.bulk = true;
      setFtsSettings(this.db, this.request.ftsBulk);
    }
  }

  /** Copies the finished documents of the staging database, in the order of their sources. */
  copyStaged(staging) {
    const { request } = this;
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
    const copied = [];
    finished.forEach((staged, at) => {
      const doc = describeDocument(staged, request.documentIds[at]);
      this.dropSource(staged.source);
      this.insertDoc.run(
        doc.documentId,
        request.listingId,
        staged.source,
        staged.format,
        staged.content_hash,
        staged.bytes,
        staged.metadata,
        staged.chunk_count,
        request.now,
        request.now,
      );
      for (const [index, text, tokens, hash, metadata, reserved, vector] of readChunks.iterate(staged.id)) {
        this.addChunk(doc, index, text, tokens, hash, metadata, reserved === 1, floatsOf(vector), vector);
      }
      doc.chunks = staged.chunk_count;
      if (doc.items) this.countDocuments.run(documentCountOf(doc), doc.documentId);
      copied.push(doc);
      this.counted(doc.chunks);
      this.indexWhenFull();
    });
    this.documents.push(...copied);
  }

  /**
   * A streamed document starts. Its row holds a placeholder source (unique per document) until it is
   * finished: the old version of the source stays until then, so a discarded document leaves it.
   */
  open({ key, documentId, source, format, contentHash, bytes }) {
    const doc = describeDocument({ source, format }, documentId);
    const { listingId, now } = this.request;
    this.insertDoc.run(
      documentId,
      listingId,
      `\u0000${documentId}`,
      format,
      contentHash,
      bytes,
      '{}',
      0,
      now,
      now,
    );
    this.streaming.set(key, doc);
    // A large import replaced (its old version most of the knowledge base): when it is finished, its old
    // rows leave the indexes by building them again, which takes in the new ones too (drop).
    if (this.waiting === undefined) {
      const ahead = this.replaceIndexesAhead(source);
      if (ahead) this.waiting = { key, ...ahead };
    }
  }

  /** A batch of a streamed document: columns of equal length, the vectors back to back. */
  add({ key, texts, tokenCounts, contentHashes, metadata, reserved, vectors }) {
    const doc = this.document(key);
    const { dimensions } = this.request;
    for (let i = 0; i < texts.length; i++) {
      const floats = vectors.subarray(i * dimensions, (i + 1) * dimensions);
      this.addChunk(
        doc,
        doc.chunks++,
        texts[i],
        tokenCounts[i],
        contentHashes[i],
        metadata[i],
        reserved[i] === 1,
        floats,
        blobOf(floats),
      );
    }
    this.counted(texts.length);
    this.indexWhenFull();
  }

  /**
   * A streamed document is complete: it takes its source (replacing the old version), metadata and,
   * when it was hashed while read, its content hash.
   */
  finish({ key, metadata, contentHash }) {
    const doc = this.document(key);
    this.streaming.delete(key);
    const awaited = this.waiting?.key === key ? this.waiting : undefined;
    if (awaited) this.waiting = undefined;
    this.dropSource(doc.source, doc.documentId, awaited);
    // Were there no old version left to drop, what waited goes in now.
    if (awaited) this.insertWaitingVectors();
    this.nameDoc.run(doc.source, doc.chunks, metadata, contentHash, documentCountOf(doc), doc.documentId);
    this.documents.push(doc);
  }

  /**
   * A streamed document failed part-way: its rows go (the full-text ones through their trigger, or with
   * the index made again when they are most of it: drop).
   */
  discard({ key }) {
    const doc = this.document(key);
    this.streaming.delete(key);
    const awaited = this.waiting?.key === key;
    if (awaited) this.waiting = undefined;
    this.drop(doc.documentId);
    // Its own vectors are gone with it; the other chunks' that waited go in (unless the drop refilled).
    if (awaited) this.insertWaitingVectors();
    this.chunks -= doc.chunks;
  }

  document(key) {
    const doc = this.streaming.get(key);
    if (!doc) throw new Error(`no streamed document ${key}`);
    return doc;
  }

  /** `upload`: a CompletedUploadRow (uploads.ts) to mark completed in this transaction, or undefined. */
  commit(upload) {
    const { db, request } = this;
    if (this.streaming.size > 0)
      throw new Error(`${this.streaming.size} streamed documents were not finished`);
    this.insertWaitingVectors();
    this.indexUnindexed();
    const { listingId } = request;
    const totals = db
      .prepare(
        `SELECT coalesce(sum(document_count), 0) AS docs, coalesce(sum(chunk_count), 0) AS chunks,
          coalesce(sum(bytes), 0) AS bytes FROM documents WHERE listing_id = ?`,
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
    if (this.takesModel) {
      db.prepare(`UPDATE listings SET embedding_model = ?, dimensions = ? WHERE id = ?`).run(
        request.model,
        request.dimensions,
        listingId,
      );
    }
    if (upload) completeUpload(db, upload, totals);
    if (this.bulk) setFtsSettings(db, FTS_DEFAULTS);
    db.exec('COMMIT');
    const documents = this.documents.map((d) => ({
      source: d.source,
      documentId: d.documentId,
      chunks: d.chunks,
    }));
    const writeLockMs = Math.round(performance.now() - this.lockedAt);
    return { documents, documentCount: totals.docs, chunkCount: totals.chunks, writeLockMs };
  }

  rollback() {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
  }
}

/**
 * Opens the knowledge base's database for the commit. The commit writes every page of the new chunks,
 * their full-text postings and vectors: a 64 MB page cache keeps SQLite from spilling pages to the WAL
 * in the middle of the transaction. This connection does not checkpoint by itself at the commit (its
 * pages stay in the WAL, where every connection reads them): the worker answers first, then checkpoints.
 */
function openDatabase(request) {
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
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Begins the transaction and copies the staged documents into it. */
function begin(db, request) {
  const transaction = new CommitTransaction(db, request);
  try {
    if (request.documentIds.length > 0) {
      const options = request.nativeBinding ? { nativeBinding: request.nativeBinding } : {};
      const staging = new Database(request.stagingFile, { ...options, readonly: true, fileMustExist: true });
      try {
        transaction.copyStaged(staging);
      } finally {
        staging.close();
      }
    }
    return transaction;
  } catch (err) {
    transaction.rollback();
    throw err;
  }
}

/** What crosses back to the calling thread: errors lose their class on the way, so they are described. */
function describe(err) {
  if (err instanceof LimitCrossed) return { limit: err.limit };
  if (err instanceof ModelConflict) return { modelConflict: err.modelConflict };
  if (err instanceof Error) return { name: err.name, message: err.message, code: err.code, stack: err.stack };
  return { name: 'Error', message: String(err) };
}

/**
 * Marks the upload this commit completes, with the knowledge base's totals; an upload that is not in
 * progress fails the commit rather than being left as it is beside the documents it reports.
 */
function completeUpload(db, upload, totals) {
  const { changes } = db
    .prepare(
      `UPDATE uploads SET status = 'completed', error = NULL, progress = json_set(?, '$.chunks', ?),
        results = json_set(?, '$.documentCount', ?, '$.chunkCount', ?), updated_at = ?
      WHERE id = ? AND status = 'processing'`,
    )
    .run(
      upload.progress,
      totals.chunks,
      upload.results,
      totals.docs,
      totals.chunks,
      upload.updatedAt,
      upload.id,
    );
  if (changes !== 1) throw new Error(`upload '${upload.id}' is not in progress; nothing was committed`);
}

/**
 * The worker's side of the conversation: `open`, `add` (answered with `{ taken: seq }` once its rows are
 * in), `finish`, `discard`, then `commit` (with the `upload` it completes, if any; answered with `{ result }`)
 * or `abort`. The first error is
 * answered with `{ error }` and rolls everything back; later messages are ignored.
 */
function serve(request) {
  let db;
  let transaction;
  let over = false;
  const end = () => {
    over = true;
    // Without a listener the port no longer keeps the thread alive: it exits once this turn is over.
    parentPort.off('message', onMessage);
    db?.close();
  };
  const fail = (err) => {
    parentPort.postMessage({ error: describe(err) });
    try {
      transaction?.rollback();
    } finally {
      end();
    }
  };
  function onMessage(message) {
    if (over) return;
    try {
      switch (message.type) {
        case 'open':
          return transaction.open(message);
        case 'add':
          transaction.add(message);
          return parentPort.postMessage({ taken: message.seq });
        case 'finish':
          return transaction.finish(message);
        case 'discard':
          return transaction.discard(message);
        case 'abort':
          transaction.rollback();
          return end();
        case 'commit': {
          const result = transaction.commit(message.upload);
          parentPort.postMessage({ result });
          // The answer is out; now the WAL's pages go to the database file (up to gigabytes after a bulk
          // import: 10 s of a 500,000-line import's commit), here, where nobody waits for it. PASSIVE:
          // it never blocks readers or writers, and a checkpoint another connection is running wins.
          try {
            db.pragma('wal_checkpoint(PASSIVE)');
          } catch {
            // A full disk, say: the pages stay in the WAL, committed, and a later checkpoint copies them.
          }
          return end();
        }
        default:
          throw new Error(`unknown message ${String(message.type)}`);
      }
    } catch (err) {
      fail(err);
    }
  }
  parentPort.on('message', onMessage);
  try {
    db = openDatabase(request);
    transaction = begin(db, request);
  } catch (err) {
    fail(err);
  }
}

/**
 * A deletion (SqliteKnowledgeBaseStore.deleteDocument, deleteDraftListing) in one transaction on this
 * thread's connection: `request.documentId`'s document (answered with what deleteDocumentRows gives, null
 * when it was already gone), or `request.listingId`'s draft (deleteDraftListingRows' outcome). Answered
 * with `{ deleted }` or `{ error }`, then the WAL checkpointed as after a commit.
 */
function serveDelete(request) {
  let db;
  try {
    db = openDatabase(request);
    const remove = () =>
      request.documentId !== undefined
        ? (deleteDocumentRows(db, request.documentId, request.now) ?? null)
        : deleteDraftListingRows(db, request.listingId);
    const deleted = db.transaction(remove).immediate();
    parentPort.postMessage({ deleted });
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // As after a commit: the pages stay in the WAL for a later checkpoint.
    }
  } catch (err) {
    parentPort.postMessage({ error: describe(err) });
  } finally {
    db?.close();
  }
}

// The worker is started before its commit is known (SqliteKnowledgeBaseStore keeps one ready while an
// ingestion reads its files): starting a thread and loading better-sqlite3 take about 30 ms, most of the
// commit of a small ingestion. Its first message is the commit's request; an idle worker is terminated.
if (!isMainThread && workerData?.role === ROLE) {
  parentPort.once('message', (message) => {
    if (message?.type === 'request') serve(message.request);
    else if (message?.type === 'delete') serveDelete(message.request);
    else
      parentPort.postMessage({
        error: describe(new Error('the commit worker was not sent its request first')),
      });
  });
}
