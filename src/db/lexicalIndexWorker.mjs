// Reads the full-text index's postings into typed arrays, on a worker thread with its own read-only
// connection, for LexicalPostings (src/core/retrieve/lexicalPostings.ts): every term FTS5 stored, the
// rows holding it and how often, each row's length (FTS5's docsize) and listing, and the index's totals
// as bm25() reads them. All in one read transaction, so the snapshot is one state of the database, named
// by its generations (knowledge_base_generations, bumped by triggers on every document written or
// deleted). At 500,000 chunks of natural text this reads about 33 million token instances in a few
// seconds (docs/performance.md, "Full-text search at scale").
// Plain JavaScript that imports only packages, so the file runs as it is beside any bundle.
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

/** Token instances read per statement: bounds the worker's transient array of row ids. */
const PAGE_INSTANCES = 2_000_000;
/** Above this, rows are found through a Map rather than an array indexed by chunk id. */
const DENSE_ID_SLACK = 4;

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

function buildPostings(db, keySql, maxInstances) {
  db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS temp.kbs_lexical_rows USING fts5vocab(main, 'chunks_fts', 'row');
    CREATE VIRTUAL TABLE IF NOT EXISTS temp.kbs_lexical_instances USING fts5vocab(main, 'chunks_fts', 'instance')`);
  db.exec('BEGIN');
  try {
    // The generations of every listing (LexicalIndexCache's key): the state this snapshot holds.
    const key = db.prepare(keySql).pluck().get();
    // The averages record (rowid 1 of %_data): the rows and, per column, the tokens bm25() averages.
    const averages = db.prepare(`SELECT block FROM chunks_fts_data WHERE id = 1`).pluck().get();
    let indexRows = 0;
    let indexTokens = 0;
    if (averages) {
      const rows = readVarint(averages, 0);
      indexRows = rows.value;
      if (rows.next < averages.length) indexTokens = readVarint(averages, rows.next).value;
    }
    if (indexTokens > maxInstances) return { skipped: `${indexTokens} tokens` };

    const chunkRows = db.prepare(`SELECT id, listing_id FROM chunks ORDER BY id`).raw().all();
    const n = chunkRows.length;
    const ids = new Float64Array(n);
    const listingOf = new Uint32Array(n);
    const listings = [];
    const listingIndex = new Map();
    const maxId = n > 0 ? chunkRows[n - 1][0] : 0;
    const dense = maxId <= DENSE_ID_SLACK * n + 1_000_000;
    const denseOf = dense ? new Int32Array(maxId + 1).fill(-1) : undefined;
    const mapOf = dense ? undefined : new Map();
    for (let i = 0; i < n; i++) {
      const [id, listing] = chunkRows[i];
      ids[i] = id;
      let l = listingIndex.get(listing);
      if (l === undefined) {
        l = listings.length;
        listings.push(listing);
        listingIndex.set(listing, l);
      }
      listingOf[i] = l;
      if (denseOf) denseOf[id] = i;
      else mapOf.set(id, i);
    }
    const positionOf = (id) => {
      const p = denseOf ? (id <= maxId ? denseOf[id] : -1) : (mapOf.get(id) ?? -1);
      if (p < 0) throw new Error(`full-text row ${id} has no chunk`);
      return p;
    };

    const lengths = new Uint32Array(n);
    for (const [id, size] of db.prepare(`SELECT id, sz FROM chunks_fts_docsize`).raw().iterate()) {
      lengths[positionOf(id)] = readVarint(size, 0).value;
    }

    // Terms in the index's order with their rows and instances; the instances then come in the same
    // order (term, then row, then offset), so each term's are the next `cnt` of them.
    const vocabulary = db.prepare(`SELECT term, doc, cnt FROM temp.kbs_lexical_rows`).raw().all();
    const terms = new Array(vocabulary.length);
    const starts = new Uint32Array(vocabulary.length + 1);
    let pairs = 0;
    for (let t = 0; t < vocabulary.length; t++) {
      terms[t] = vocabulary[t][0];
      starts[t] = pairs;
      pairs += vocabulary[t][1];
    }
    starts[vocabulary.length] = pairs;
    const positions = new Uint32Array(pairs);
    let counts = new Uint16Array(pairs);
    const instances = db
      .prepare(`SELECT doc FROM temp.kbs_lexical_instances WHERE term >= ? AND term <= ?`)
      .pluck();
    let p = 0;
    for (let first = 0; first < vocabulary.length;) {
      let last = first;
      let expected = vocabulary[first][2];
      while (last + 1 < vocabulary.length && expected + vocabulary[last + 1][2] <= PAGE_INSTANCES) {
        last++;
        expected += vocabulary[last][2];
      }
      const docs = instances.all(terms[first], terms[last]);
      if (docs.length !== expected) {
        throw new Error(
          `the full-text index listed ${docs.length} instances of terms it counted ${expected} of`,
        );
      }
      let at = 0;
      for (let t = first; t <= last; t++) {
        const end = at + vocabulary[t][2];
        let previous = -1;
        while (at < end) {
          const doc = docs[at++];
          if (doc === previous) {
            const c = counts[p - 1] + 1;
            if (c > 0xffff && counts instanceof Uint16Array) counts = Uint32Array.from(counts);
            counts[p - 1] = c;
            continue;
          }
          previous = doc;
          positions[p] = positionOf(doc);
          counts[p] = 1;
          p++;
        }
        if (p !== starts[t + 1]) throw new Error(`term ${JSON.stringify(terms[t])}: rows out of step`);
      }
      first = last + 1;
    }
    return {
      data: { indexRows, indexTokens, ids, lengths, listingOf, listings, terms, starts, positions, counts },
      key,
    };
  } finally {
    db.exec('COMMIT');
  }
}

if (!isMainThread && workerData?.role === 'kbstudio-lexical-index') {
  let db;
  try {
    db = new Database(workerData.file, { readonly: true, fileMustExist: true });
    db.pragma(`busy_timeout = 5000`);
    const built = buildPostings(db, workerData.keySql, workerData.maxInstances);
    if (built.skipped) parentPort.postMessage({ skipped: built.skipped });
    else {
      const d = built.data;
      parentPort.postMessage({ key: built.key, data: d }, [
        d.ids.buffer,
        d.lengths.buffer,
        d.listingOf.buffer,
        d.starts.buffer,
        d.positions.buffer,
        d.counts.buffer,
      ]);
    }
  } catch (err) {
    parentPort.postMessage({ error: { message: err instanceof Error ? err.message : String(err) } });
  } finally {
    db?.close();
  }
}
