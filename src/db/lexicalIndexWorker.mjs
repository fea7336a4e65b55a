// Reads the full-text index's postings into typed arrays, on a worker thread with its own read-only
// connection, for LexicalPostings (src/core/retrieve/lexicalPostings.ts): every term FTS5 stored, the
// rows holding it and how often, each row's length and listing, and the index's totals
// as bm25() reads them. All in one read transaction, so the snapshot is one state of the database, named
// by its generations (knowledge_base_generations, bumped by triggers on every document written or
// deleted). At 500,000 chunks of natural text the whole read takes about 8.6 s (33 million token
// instances); after a change it follows the changed documents into the earlier arrays instead, about a
// second (docs/performance.md, "Full-text postings in memory").
// Plain JavaScript that imports only packages, so the file runs as it is beside any bundle.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { startReadingPostingsFile, writePostingsFile } from './lexicalPostingsFile.mjs';

/**
 * Token instances read per statement: bounds the worker's transient arrays of row ids. With 2 million a
 * page, the garbage of earlier pages waiting for the collector took the process's peak 370 MB above what
 * the postings hold at 500,000 chunks; with 250,000, about 80 MB, and the read is no slower.
 */
const PAGE_INSTANCES = 250_000;
/** Above this, rows are found through a Map rather than an array indexed by chunk id. */
const DENSE_ID_SLACK = 4;

/**
 * A typed array in shared memory: the postings are searched on the lexical thread as well as the
 * calling one (src/core/retrieve/lexicalThread.ts), both reading the same arrays.
 */
function sharedArray(Type, length) {
  return new Type(new SharedArrayBuffer(length * Type.BYTES_PER_ELEMENT));
}

/** A copy of a typed array (or a part of one) in shared memory; a Buffer's is a Uint8Array. */
function toShared(array) {
  const copy = sharedArray(Buffer.isBuffer(array) ? Uint8Array : array.constructor, array.length);
  copy.set(array);
  return copy;
}

/** A typed array of twice the length with the same values first. */
function grown(array) {
  const larger = new array.constructor(array.length * 2);
  larger.set(array);
  return larger;
}

/**
 * Every chunk id, ascending, with its listing: each listing's ids through the listing index (the ids
 * alone, about 10 times faster than reading every row's listing id), merged.
 */
function chunksByListing(db) {
  const listings = db.prepare(`SELECT DISTINCT listing_id FROM chunks`).pluck().all();
  const idsOf = db.prepare(`SELECT id FROM chunks WHERE listing_id = ? ORDER BY id`).pluck();
  const runs = listings.map((listing) => idsOf.all(listing));
  const n = runs.reduce((sum, run) => sum + run.length, 0);
  const ids = new Float64Array(n);
  const listingOf = new Uint32Array(n);
  let at = 0;
  runs.forEach((run, l) => {
    ids.set(run, at);
    listingOf.fill(l, at, at + run.length);
    at += run.length;
  });
  let sorted = true;
  for (let i = 1; i < n && sorted; i++) sorted = ids[i - 1] < ids[i];
  if (sorted) return { ids, listingOf, listings };
  // Listings written in turns interleave: order the rows by id.
  const order = Uint32Array.from({ length: n }, (_, i) => i).sort((a, b) => ids[a] - ids[b]);
  return {
    ids: Float64Array.from(order, (i) => ids[i]),
    listingOf: Uint32Array.from(order, (i) => listingOf[i]),
    listings,
  };
}

/** SQLite's varint (FTS5 stores its totals and docsizes in it): big-endian 7-bit groups, 9 bytes at most. */
function readVarint(bytes, at) {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const b = bytes[at + i];
    if (b === undefined) throw new Error('a truncated varint in the full-text index');
    value = value * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) return { value, next: at + i + 1 };
  }
  return { value: value * 256 + bytes[at + 8], next: at + 9 };
}

/** One read transaction: everything read in `read` is of one state of the database. */
function inReadTransaction(db, read) {
  db.exec('BEGIN');
  try {
    return read();
  } finally {
    db.exec('COMMIT');
  }
}

/**
 * Why the rows' lengths (their token instances) do not add up to the index's token total, if they do
 * not: bm25() reads both, so postings that disagree with the index must not answer.
 */
function tokensMismatch(lengths, indexTokens) {
  let tokens = 0;
  for (let i = 0; i < lengths.length; i++) tokens += lengths[i];
  return tokens === indexTokens
    ? undefined
    : `the full-text index holds ${tokens} token instances but totals ${indexTokens}`;
}

/** The averages record (rowid 1 of %_data): the rows and, per column, the tokens bm25() averages. */
function indexTotals(db) {
  const averages = db.prepare(`SELECT block FROM chunks_fts_data WHERE id = 1`).pluck().get();
  let indexRows = 0;
  let indexTokens = 0;
  if (averages) {
    const rows = readVarint(averages, 0);
    indexRows = rows.value;
    if (rows.next < averages.length) indexTokens = readVarint(averages, rows.next).value;
  }
  return { indexRows, indexTokens };
}

/**
 * Each document's chunks: the least and greatest id and how many. Documents are never changed, only
 * written or deleted, and their ids are never reused (chunk ids can be: a new chunk may take the id of
 * a deleted last one), so a document present before and after a change has the same chunks.
 */
function documentRanges(db) {
  const rows = db
    .prepare(`SELECT document_id, min(id), max(id), count(*) FROM chunks GROUP BY document_id`)
    .raw()
    .all();
  return {
    ids: rows.map((r) => r[0]),
    first: Float64Array.from(rows, (r) => r[1]),
    last: Float64Array.from(rows, (r) => r[2]),
    counts: Float64Array.from(rows, (r) => r[3]),
  };
}

function buildPostings(db, keySql, maxInstances) {
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.kbs_lexical_rows USING fts5vocab(main, 'chunks_fts', 'row');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.kbs_lexical_instances USING fts5vocab(main, 'chunks_fts', 'instance')`);
  return inReadTransaction(db, () => {
    // The generations of every listing (LexicalIndexCache's key): the state this snapshot holds.
    const key = db.prepare(keySql).pluck().get();
    const { indexRows, indexTokens } = indexTotals(db);
    if (indexTokens > maxInstances) return { skipped: `${indexTokens} tokens` };

    const { ids, listingOf, listings } = chunksByListing(db);
    const documents = documentRanges(db);
    const n = ids.length;
    const maxId = n > 0 ? ids[n - 1] : 0;
    const dense = maxId <= DENSE_ID_SLACK * n + 1_000_000;
    const denseOf = dense ? new Int32Array(maxId + 1).fill(-1) : undefined;
    const mapOf = dense ? undefined : new Map();
    for (let i = 0; i < n; i++) {
      if (denseOf) denseOf[ids[i]] = i;
      else mapOf.set(ids[i], i);
    }
    const positionOf = (id) => {
      const p = denseOf ? (id <= maxId ? denseOf[id] : -1) : (mapOf.get(id) ?? -1);
      if (p < 0) throw new Error(`full-text row ${id} has no chunk`);
      return p;
    };
    // Each row's length (bm25()'s document length, FTS5's docsize) is its token instances, counted
    // below: reading the docsize blobs took longer than the count (0.8 s at 500,000 rows). Their sum is
    // checked against the index's own total.
    const lengths = new Uint32Array(n);

    // Terms in the index's order with their rows and instances; the instances then come in the same
    // order (term, then row, then offset), so each term's are the next `cnt` of them. The terms are
    // kept as their UTF-8 bytes back to back (FTS5's order is that of the bytes), not as strings: a
    // knowledge base of identifiers can hold millions of distinct terms.
    let termBytes = Buffer.allocUnsafe(1 << 20);
    let termOffsets = new Uint32Array(1 << 16);
    let starts = new Uint32Array(1 << 16);
    let instanceCounts = new Uint32Array(1 << 16);
    let termCount = 0;
    let bytesUsed = 0;
    let pairs = 0;
    const vocabulary = db.prepare(`SELECT term, doc, cnt FROM temp.kbs_lexical_rows`).raw();
    for (const [term, rowsWith, instancesOf] of vocabulary.iterate()) {
      if (termCount + 2 > termOffsets.length) {
        termOffsets = grown(termOffsets);
        starts = grown(starts);
        instanceCounts = grown(instanceCounts);
      }
      const room = Buffer.byteLength(term, 'utf8');
      if (bytesUsed + room > termBytes.length) {
        const larger = Buffer.allocUnsafe(Math.max(termBytes.length * 2, bytesUsed + room));
        termBytes.copy(larger, 0, 0, bytesUsed);
        termBytes = larger;
      }
      termOffsets[termCount] = bytesUsed;
      termBytes.write(term, bytesUsed, 'utf8');
      const previous = termCount > 0 ? termOffsets[termCount - 1] : -1;
      if (
        previous >= 0 &&
        termBytes.compare(termBytes, bytesUsed, bytesUsed + room, previous, bytesUsed) >= 0
      ) {
        throw new Error(`the full-text index listed its terms out of order at ${JSON.stringify(term)}`);
      }
      bytesUsed += room;
      starts[termCount] = pairs;
      instanceCounts[termCount] = instancesOf;
      pairs += rowsWith;
      termCount++;
    }
    termOffsets[termCount] = bytesUsed;
    starts[termCount] = pairs;
    const termAt = (t) => termBytes.toString('utf8', termOffsets[t], termOffsets[t + 1]);
    const positions = sharedArray(Uint32Array, pairs);
    let counts = sharedArray(Uint16Array, pairs);
    const instances = db
      .prepare(`SELECT doc FROM temp.kbs_lexical_instances WHERE term >= ? AND term <= ?`)
      .pluck();
    let p = 0;
    for (let first = 0; first < termCount;) {
      let last = first;
      let expected = instanceCounts[first];
      while (last + 1 < termCount && expected + instanceCounts[last + 1] <= PAGE_INSTANCES) {
        last++;
        expected += instanceCounts[last];
      }
      const docs = instances.all(termAt(first), termAt(last));
      if (docs.length !== expected) {
        throw new Error(
          `the full-text index listed ${docs.length} instances of terms it counted ${expected} of`,
        );
      }
      let at = 0;
      for (let t = first; t <= last; t++) {
        const end = at + instanceCounts[t];
        let previous = -1;
        while (at < end) {
          const doc = docs[at++];
          if (doc === previous) {
            lengths[positions[p - 1]]++;
            const c = counts[p - 1] + 1;
            if (c > 0xffff && counts instanceof Uint16Array) {
              const wider = sharedArray(Uint32Array, pairs);
              wider.set(counts);
              counts = wider;
            }
            counts[p - 1] = c;
            continue;
          }
          previous = doc;
          const row = positionOf(doc);
          positions[p] = row;
          lengths[row]++;
          counts[p] = 1;
          p++;
        }
        if (p !== starts[t + 1]) throw new Error(`term ${JSON.stringify(termAt(t))}: rows out of step`);
      }
      first = last + 1;
    }
    const mismatch = tokensMismatch(lengths, indexTokens);
    if (mismatch) throw new Error(mismatch);
    return {
      data: {
        indexRows,
        indexTokens,
        ids: toShared(ids),
        lengths: toShared(lengths),
        listingOf: toShared(listingOf),
        listings,
        // Copies of the used parts.
        termBytes: toShared(termBytes.subarray(0, bytesUsed)),
        termOffsets: toShared(termOffsets.subarray(0, termCount + 1)),
        starts: toShared(starts.subarray(0, termCount + 1)),
        positions,
        counts,
      },
      documents,
      key,
    };
  });
}

/**
 * The postings of the current state from those of an earlier one (`old`: its data and documents),
 * when few documents changed: the rows of deleted documents dropped, those of new documents tokenized
 * by FTS5 itself (a temporary full-text table of the same tokenizer) and merged into each term's run.
 * About half a second at 500,000 chunks for a small change, against 8 s to read everything again.
 * Returns { rebuild: reason } when the change is too large or not one this can follow.
 */
function refreshPostings(db, keySql, old, tokenize, maxChangedShare, maxInstances) {
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.kbs_lexical_new USING fts5 (text, tokenize = '${tokenize.replace(/'/g, "''")}');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.kbs_lexical_new_instances USING fts5vocab(temp, 'kbs_lexical_new', 'instance')`);
  return inReadTransaction(db, () => {
    const key = db.prepare(keySql).pluck().get();
    const { indexRows, indexTokens } = indexTotals(db);
    // Past the memory bound, the whole read declines too.
    if (indexTokens > maxInstances) return { rebuild: `${indexTokens} tokens` };
    const documents = documentRanges(db);
    const oldDocuments = new Set(old.documents.ids);
    // The chunk ids of the new documents: a commit writes a document's chunks one after another, so
    // usually a range; a document streamed beside another can interleave, and its ids are read.
    const idsOf = db.prepare(`SELECT id FROM chunks WHERE document_id = ?`).pluck();
    const addedIds = [];
    let keptRows = 0;
    for (let d = 0; d < documents.ids.length; d++) {
      const first = documents.first[d];
      const last = documents.last[d];
      const count = documents.counts[d];
      if (oldDocuments.has(documents.ids[d])) keptRows += count;
      else if (last - first + 1 === count) for (let id = first; id <= last; id++) addedIds.push(id);
      else for (const id of idsOf.all(documents.ids[d])) addedIds.push(id);
    }
    const { ids, listingOf, listings } = chunksByListing(db);
    const n = ids.length;
    const changedRows = addedIds.length + (old.data.ids.length - keptRows);
    if (changedRows > maxChangedShare * Math.max(n, old.data.ids.length)) {
      return { rebuild: `${changedRows} chunks changed` };
    }
    const added = Float64Array.from(addedIds).sort();

    // Each kept row's new position; the new rows' positions, in id order. Rows are told apart by
    // document, not by id: a new document's chunk may have the id a deleted one's had.
    const oldIds = old.data.ids;
    const remap = new Int32Array(oldIds.length).fill(-1);
    const newRows = [];
    for (let j = 0, i = 0, k = 0; j < n; j++) {
      const id = ids[j];
      while (k < added.length && added[k] < id) k++;
      if (k < added.length && added[k] === id) {
        newRows.push(j);
        continue;
      }
      while (i < oldIds.length && oldIds[i] < id) i++;
      if (i === oldIds.length || oldIds[i] !== id) return { rebuild: `chunk ${id} is in no document` };
      remap[i++] = j;
    }
    if (newRows.length !== added.length) return { rebuild: 'new chunks missing from their listings' };

    // The new rows' terms, as FTS5 tokenizes them: row ids in the temporary table are new positions.
    db.exec(`DELETE FROM temp.kbs_lexical_new`);
    const textOf = db.prepare(`SELECT text FROM chunks WHERE id = ?`).pluck();
    const insert = db.prepare(`INSERT INTO temp.kbs_lexical_new (rowid, text) VALUES (?, ?)`);
    for (const j of newRows) insert.run(j, textOf.get(ids[j]));
    const lengths = new Uint32Array(n);
    for (let i = 0; i < oldIds.length; i++) if (remap[i] >= 0) lengths[remap[i]] = old.data.lengths[i];
    const fresh = new Map();
    let largest = 0;
    for (const [term, doc] of db
      .prepare(`SELECT term, doc FROM temp.kbs_lexical_new_instances`)
      .raw()
      .iterate()) {
      lengths[doc]++;
      let run = fresh.get(term);
      if (!run) fresh.set(term, (run = { positions: [], counts: [] }));
      const last = run.positions.length - 1;
      if (last >= 0 && run.positions[last] === doc) largest = Math.max(largest, ++run.counts[last]);
      else {
        run.positions.push(doc);
        run.counts.push(1);
      }
    }
    const mismatch = tokensMismatch(lengths, indexTokens);
    if (mismatch) return { rebuild: mismatch };

    // Old terms and new ones, merged in the order of their bytes; each term's rows merged by position.
    const freshTerms = [...fresh].map(([term, run]) => ({ bytes: Buffer.from(term, 'utf8'), run }));
    freshTerms.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
    const o = old.data;
    const oldTermCount = o.termOffsets.length - 1;
    const oldBytes = Buffer.from(o.termBytes.buffer, o.termBytes.byteOffset, o.termBytes.byteLength);
    let kept = 0;
    for (let p = 0; p < o.positions.length; p++) if (remap[o.positions[p]] >= 0) kept++;
    let pairs = kept;
    for (const run of fresh.values()) pairs += run.positions.length;
    const positions = sharedArray(Uint32Array, pairs);
    const counts = sharedArray(
      o.counts instanceof Uint32Array || largest > 0xffff ? Uint32Array : Uint16Array,
      pairs,
    );
    const termChunks = [];
    let termBytesUsed = 0;
    const termOffsets = [];
    const starts = [];
    let p = 0;
    const addTerm = (bytes, oldTerm, run) => {
      const from = p;
      let a = oldTerm === undefined ? 0 : o.starts[oldTerm];
      const aEnd = oldTerm === undefined ? 0 : o.starts[oldTerm + 1];
      let b = 0;
      const bEnd = run ? run.positions.length : 0;
      for (;;) {
        while (a < aEnd && remap[o.positions[a]] < 0) a++;
        const nextOld = a < aEnd ? remap[o.positions[a]] : Infinity;
        const nextNew = b < bEnd ? run.positions[b] : Infinity;
        if (nextOld === Infinity && nextNew === Infinity) break;
        if (nextOld < nextNew) {
          positions[p] = nextOld;
          counts[p++] = o.counts[a++];
        } else {
          positions[p] = nextNew;
          counts[p++] = run.counts[b++];
        }
      }
      // A term left only in deleted rows is dropped, as FTS5's vocabulary no longer lists it.
      if (p === from) return;
      termOffsets.push(termBytesUsed);
      starts.push(from);
      termChunks.push(bytes);
      termBytesUsed += bytes.length;
    };
    let t = 0;
    let f = 0;
    while (t < oldTermCount || f < freshTerms.length) {
      const oldTerm =
        t < oldTermCount ? oldBytes.subarray(o.termOffsets[t], o.termOffsets[t + 1]) : undefined;
      const order =
        oldTerm === undefined
          ? 1
          : f === freshTerms.length
            ? -1
            : Buffer.compare(oldTerm, freshTerms[f].bytes);
      if (order < 0) addTerm(oldTerm, t++, undefined);
      else if (order > 0) {
        addTerm(freshTerms[f].bytes, undefined, freshTerms[f].run);
        f++;
      } else {
        addTerm(oldTerm, t++, freshTerms[f].run);
        f++;
      }
    }
    termOffsets.push(termBytesUsed);
    starts.push(p);
    if (p !== pairs) throw new Error(`merged ${p} postings of ${pairs}`);
    return {
      data: {
        ...{ indexRows, indexTokens, listings },
        ids: toShared(ids),
        lengths: toShared(lengths),
        listingOf: toShared(listingOf),
        termBytes: toShared(Buffer.concat(termChunks, termBytesUsed)),
        termOffsets: toShared(Uint32Array.from(termOffsets)),
        starts: toShared(Uint32Array.from(starts)),
        positions,
        counts,
      },
      documents,
      key,
    };
  });
}

/** What saved postings must match to be taken as they are: the generations, index totals and documents. */
function databaseState(db, keySql) {
  return inReadTransaction(db, () => ({
    key: db.prepare(keySql).pluck().get(),
    totals: indexTotals(db),
    documents: documentRanges(db),
  }));
}

/**
 * Whether the database, in `state` (databaseState), is in the state `saved` holds: the same generations,
 * index totals and documents (each with the same chunk ids). The generations alone could match another
 * database's.
 */
function unchangedSince(state, saved) {
  if (state.key !== saved.key) return false;
  const { indexRows, indexTokens } = state.totals;
  if (indexRows !== saved.data.indexRows || indexTokens !== saved.data.indexTokens) return false;
  const now = state.documents;
  const then = new Map(saved.documents.ids.map((id, d) => [id, d]));
  if (now.ids.length !== then.size) return false;
  return now.ids.every((id, d) => {
    const s = then.get(id);
    return (
      s !== undefined &&
      now.first[d] === saved.documents.first[s] &&
      now.last[d] === saved.documents.last[s] &&
      now.counts[d] === saved.documents.counts[s]
    );
  });
}

/**
 * The postings saved at `savedFile` and whether the database is still in their state (unchangedSince),
 * or why the file was not used. The state is read on this thread while libuv's threads read the file:
 * 70 ms and 0.1–0.2 s at 500,000 chunks, one after the other before.
 */
async function readSaved(db, keySql, savedFile, tokenize) {
  const reason = (err) => ({ fileNotUsed: err instanceof Error ? err.message : String(err) });
  let reading;
  try {
    reading = await startReadingPostingsFile(savedFile, tokenize);
  } catch (err) {
    return reason(err);
  }
  if (!reading) return {};
  // Settled here, whatever happens below: no rejection is left unhandled, no read left running.
  const read = reading.postings.then((saved) => ({ saved }), reason);
  let state;
  try {
    state = databaseState(db, keySql);
  } finally {
    await read;
  }
  const { saved, fileNotUsed } = await read;
  return { saved, fileNotUsed, unchanged: saved !== undefined && unchangedSince(state, saved) };
}

async function serve() {
  let db;
  try {
    const { nativeBinding } = workerData;
    db = new Database(workerData.file, {
      readonly: true,
      fileMustExist: true,
      ...(nativeBinding ? { nativeBinding } : {}),
    });
    db.pragma(`busy_timeout = 5000`);
    const { keySql, maxInstances, tokenize, maxChangedShare, savedFile } = workerData;
    let { old } = workerData;
    let built;
    let read = 'whole';
    let notSaved;
    let fileNotUsed;
    let followedFromFile = false;
    // No earlier postings in this process: those saved by an earlier one, as they are when nothing has
    // changed since, else followed from.
    if (!old && savedFile) {
      const found = await readSaved(db, keySql, savedFile, tokenize);
      const { saved } = found;
      fileNotUsed = found.fileNotUsed;
      if (saved && saved.data.indexTokens <= maxInstances && found.unchanged) {
        built = saved;
        read = 'file';
      } else if (saved) {
        old = saved;
      }
    }
    if (!built && old) {
      try {
        built = refreshPostings(db, keySql, old, tokenize, maxChangedShare, maxInstances);
      } catch (err) {
        // Whatever went wrong with the earlier postings, reading everything again still answers.
        built = { rebuild: err instanceof Error ? err.message : String(err) };
      }
      if (built.rebuild === undefined) read = 'followed';
      followedFromFile = read === 'followed' && !workerData.old;
    }
    const notFollowed = built?.rebuild;
    if (read === 'whole') built = buildPostings(db, keySql, maxInstances);
    if (built.skipped) parentPort.postMessage({ skipped: built.skipped });
    else {
      const d = built.data;
      const documents = built.documents;
      // Saved before the reply hands the documents' arrays over: a read of the whole index always (it is
      // the costly one), a followed change when asked. The postings' own arrays are in shared memory.
      const save =
        savedFile &&
        (read === 'whole' || (read === 'followed' && (workerData.saveFollowed || followedFromFile)));
      let saveMs;
      if (save) {
        const started = performance.now();
        try {
          writePostingsFile(savedFile, built, tokenize, workerData.spareBytes);
          saveMs = performance.now() - started;
        } catch (err) {
          notSaved = err instanceof Error ? err.message : String(err);
        }
      }
      const reply = {
        key: built.key,
        data: d,
        documents,
        read,
        followedFromFile,
        notFollowed,
        fileNotUsed,
        saved: save && notSaved === undefined,
        saveMs,
        notSaved,
      };
      // The postings' arrays are in shared memory (shared, not copied); the documents' are handed over.
      parentPort.postMessage(reply, [documents.first.buffer, documents.last.buffer, documents.counts.buffer]);
    }
  } catch (err) {
    parentPort.postMessage({ error: { message: err instanceof Error ? err.message : String(err) } });
  } finally {
    db?.close();
  }
}

if (!isMainThread && workerData?.role === 'kbstudio-lexical-index') void serve();
