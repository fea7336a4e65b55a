// Writes a listing's vectors file (src/db/vectorFile.ts describes it) from `embeddings`, on a worker
// thread with its own read-only connection: one read transaction, so the vectors are those of the
// generation the header names. Written beside the final path and renamed over it once whole, so a reader
// never sees half a file. 500,000 vectors of 1,024 dimensions: about 7 s, 2 GB.
// Plain JavaScript that imports only packages, so the file runs as it is beside any bundle.
import { closeSync, ftruncateSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

// Keep in step with src/db/vectorFile.ts.
const HEADER_BYTES = 4096;
const FORMAT = 'kbstudio-vectors';
const VERSION = 2;
/** src/core/retrieve/signCodes.ts's codeBytes. */
const codeBytesOf = (dimensions) => Math.ceil(dimensions / 256) * 32;
/** Vectors written a write at a time. */
const BATCH_BYTES = 1 << 20;

/** Writes all of `length` bytes of `buffer` at `position` (a write may take fewer); returns the length. */
function writeAll(fd, buffer, length, position) {
  for (let done = 0; done < length;) {
    const written = writeSync(fd, buffer, done, length - done, position + done);
    if (written === 0) throw new Error(`nothing written at byte ${position + done}`);
    done += written;
  }
  return length;
}

/** Writes the file at `tmp`; returns the generation and count it holds. */
function writeVectors(db, tmp, { listingId, model, dimensions }) {
  const bytes = dimensions * 4;
  const fd = openSync(tmp, 'w');
  try {
    db.exec('BEGIN');
    try {
      const generation =
        db
          .prepare(`SELECT generation FROM knowledge_base_generations WHERE listing_id = ?`)
          .pluck()
          .get(listingId) ?? 0;
      const rows = db
        .prepare(
          `SELECT e.chunk_id, e.vector FROM chunks c JOIN embeddings e ON e.chunk_id = c.id
            WHERE c.listing_id = ? AND e.model = ? ORDER BY c.id`,
        )
        .raw()
        .iterate(listingId, model);
      const perBatch = Math.max(1, Math.floor(BATCH_BYTES / bytes));
      const batch = Buffer.alloc(perBatch * bytes);
      let ids = new Float64Array(1024);
      let count = 0;
      let inBatch = 0;
      let at = HEADER_BYTES;
      for (const [id, vector] of rows) {
        if (!Buffer.isBuffer(vector) || vector.length !== bytes) {
          throw new Error(`chunk ${id} has a vector of ${vector?.length ?? 0} bytes, not ${bytes}`);
        }
        if (count === ids.length) {
          const larger = new Float64Array(ids.length * 2);
          larger.set(ids);
          ids = larger;
        }
        ids[count++] = id;
        vector.copy(batch, inBatch * bytes);
        if (++inBatch === perBatch) {
          at += writeAll(fd, batch, batch.length, at);
          inBatch = 0;
        }
      }
      if (inBatch > 0) at += writeAll(fd, batch, inBatch * bytes, at);
      const idBytes = Buffer.from(ids.buffer, 0, count * 8);
      at += writeAll(fd, idBytes, idBytes.length, at);
      const codeBytes = writeCodes(db, fd, at, { listingId, model, dimensions }, ids, count);
      const header = {
        format: FORMAT,
        version: VERSION,
        listingId,
        model,
        dimensions,
        generation,
        count,
        codeBytes,
      };
      const json = Buffer.from(JSON.stringify(header));
      if (json.length > HEADER_BYTES) throw new Error(`the header of ${listingId}'s vectors is too long`);
      const head = Buffer.alloc(HEADER_BYTES, ' ');
      json.copy(head);
      writeAll(fd, head, HEADER_BYTES, 0);
      return { generation, count };
    } finally {
      db.exec('COMMIT');
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the sign codes of the `count` chunks in `ids` at `at`, from `vector_codes` in the same read
 * transaction; returns their bytes each, or 0 (and writes none) when they are not exactly one code of the
 * expected size for each of those chunks, in the same order (the search codes are then read from SQLite).
 */
function writeCodes(db, fd, at, { listingId, model, dimensions }, ids, count) {
  const codeBytes = codeBytesOf(dimensions);
  const rows = db
    .prepare(`SELECT chunk_id, code FROM vector_codes WHERE listing_id = ? AND model = ? ORDER BY chunk_id`)
    .raw()
    .iterate(listingId, model);
  const perBatch = Math.max(1, Math.floor(BATCH_BYTES / codeBytes));
  const batch = Buffer.alloc(perBatch * codeBytes);
  let filled = 0;
  let inBatch = 0;
  let position = at;
  let whole = true;
  for (const [id, code] of rows) {
    if (filled === count || id !== ids[filled] || !Buffer.isBuffer(code) || code.length !== codeBytes) {
      whole = false;
      break; // ends the iteration, which closes the statement
    }
    code.copy(batch, inBatch * codeBytes);
    filled++;
    if (++inBatch === perBatch) {
      position += writeAll(fd, batch, batch.length, position);
      inBatch = 0;
    }
  }
  if (whole && filled === count) {
    if (inBatch > 0) writeAll(fd, batch, inBatch * codeBytes, position);
    return codeBytes;
  }
  ftruncateSync(fd, at);
  return 0;
}

if (!isMainThread && workerData?.role === 'kbstudio-vector-file') {
  const { file, nativeBinding, path } = workerData;
  const tmp = `${path}.${process.pid}-${threadId}.tmp`;
  let db;
  try {
    db = new Database(file, {
      readonly: true,
      fileMustExist: true,
      ...(nativeBinding ? { nativeBinding } : {}),
    });
    db.pragma(`busy_timeout = 5000`);
    const written = writeVectors(db, tmp, workerData);
    renameSync(tmp, path);
    parentPort.postMessage(written);
  } catch (err) {
    rmSync(tmp, { force: true });
    parentPort.postMessage({ error: { message: err instanceof Error ? err.message : String(err) } });
  } finally {
    db?.close();
  }
}
