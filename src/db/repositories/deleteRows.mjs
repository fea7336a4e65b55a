// Removing a document, or a draft listing with its knowledge base: shared by the server's connection
// (small deletions, tests) and the commit worker (commitWorker.mjs), which runs them off the server's
// thread. Row by row, the vector index (vec0) and the full-text index cost tens of microseconds per
// chunk, so deleting a 450,000-chunk import took most of a minute; when the deleted rows outnumber the
// ones kept, both indexes are built again from what stays instead (docs/performance.md, "Deletions at
// scale").
// Plain JavaScript: it runs as it is inside the worker.

/**
 * Whether deleting `deleting` of `total` rows is done faster by building the index again from the rows
 * kept: when at least as many go as stay (a vec0 row costs more to delete than to insert: 39 against
 * 32 µs at 500,000 × 1,024 on a quiet machine; an FTS5 row about as much to remove as to index).
 */
export const rebuildFaster = (deleting, total) => deleting > 0 && deleting >= total - deleting;

/**
 * Deletes the vectors of document `documentId`'s chunks from the vec0 table of `index` (a vector_indexes
 * row), row by row, or with `rebuild`, by dropping the table and making it again (same name, same
 * definition) from the float blobs of the listing's other documents, which are the vectors of record.
 * Call it inside a write transaction, before the chunks go.
 */
export function deleteDocumentVectors(db, index, documentId, rebuild) {
  const { table_name: table, listing_id: listingId, model } = index;
  if (!rebuild) {
    // One rowid at a time: vec0 takes `rowid = ?` as a point lookup, but `rowid IN (SELECT ...)` as a
    // scan of the whole table with the list as a filter (18 ms a document at 142,000 rows, against
    // 0.08 ms), which made a folder with a quarter of its files changed take 50 s to ingest again
    // instead of 5 (docs/performance.md, thirtieth pass).
    // (Read whole first: a connection runs nothing else while a statement is iterated.)
    const ids = db.prepare(`SELECT id FROM chunks WHERE document_id = ?`).pluck().all(documentId);
    const remove = db.prepare(`DELETE FROM ${table} WHERE rowid = ?`);
    for (const id of ids) remove.run(id);
    return;
  }
  const definition = db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).pluck().get(table);
  db.exec(`DROP TABLE ${table}`);
  db.exec(definition);
  // Document by document through the (document_id, chunk_index) index: each one's chunk ids in order,
  // without reading a chunk row or sorting the blobs.
  db.prepare(
    `INSERT INTO ${table} (rowid, embedding)
     SELECT e.chunk_id, e.vector FROM documents d
       JOIN chunks c ON c.document_id = d.id JOIN embeddings e ON e.chunk_id = c.id
     WHERE d.listing_id = ? AND d.id <> ? AND e.model = ?`,
  ).run(listingId, documentId, model);
}

/** Chunks of every listing: the full-text index is one for all of them. */
export const allChunks = (db) => db.prepare(`SELECT count(*) FROM chunks`).pluck().get();

/** The definition of the trigger that removes a deleted chunk's full-text rows, or undefined. */
export const fullTextDeleteTrigger = (db) =>
  db
    .prepare(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'chunks_fts_delete'`)
    .pluck()
    .get();

/**
 * Runs `remove`, which deletes chunks, with their full-text rows removed: one by one through the
 * chunks_fts_delete trigger (which tokenizes each text again), or with `rebuild`, by building the index
 * again from the chunks left (FTS5's 'rebuild'), the trigger dropped meanwhile and made again from its
 * own definition. Call it inside a write transaction.
 */
export function withFullTextRemoved(db, rebuild, remove) {
  const trigger = rebuild ? fullTextDeleteTrigger(db) : undefined;
  if (!trigger) return remove(); // row by row; or not the schema this was written for
  db.exec(`DROP TRIGGER chunks_fts_delete`);
  const result = remove();
  db.exec(`INSERT INTO chunks_fts (chunks_fts) VALUES ('rebuild')`);
  db.exec(trigger);
  return result;
}

/** The vec0 tables of a listing, one per model (vector_indexes rows). */
const vectorIndexes = (db, listingId) =>
  db.prepare(`SELECT * FROM vector_indexes WHERE listing_id = ?`).all(listingId);

/**
 * Removes document `id` with its chunks, their full-text rows (by trigger), their vectors in every index
 * of the listing, float blobs and sign codes (by cascade), and updates the listing's counters. Call it
 * inside a write transaction. Returns the document's row as it was and the listing's new totals, or
 * undefined when there is no such document. `rebuildIndexes: false` deletes row by row whatever the
 * share (the benchmark's baseline, bench/studioDelete.ts).
 */
export function deleteDocumentRows(db, id, now, { rebuildIndexes = true } = {}) {
  const row = db.prepare(`SELECT * FROM documents WHERE id = ?`).get(id);
  if (!row) return undefined;
  // vec0 has no foreign key: its rows go first, found through the chunks they belong to. Table names
  // come from the store's own vector_indexes rows, never from input. The counters decide how.
  const listingChunks = db
    .prepare(`SELECT chunk_count FROM listings WHERE id = ?`)
    .pluck()
    .get(row.listing_id);
  const chunks = db.prepare(`SELECT count(*) FROM chunks WHERE document_id = ?`).pluck().get(id);
  const rebuild = rebuildIndexes && rebuildFaster(chunks, listingChunks);
  for (const index of vectorIndexes(db, row.listing_id)) {
    deleteDocumentVectors(db, index, id, rebuild);
  }
  // The whole table is counted only when the listing alone allows it.
  withFullTextRemoved(db, rebuild && rebuildFaster(chunks, allChunks(db)), () => {
    db.prepare(`DELETE FROM embeddings WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?)`).run(
      id,
    );
    db.prepare(`DELETE FROM chunks WHERE document_id = ?`).run(id);
    db.prepare(`DELETE FROM documents WHERE id = ?`).run(id);
  });
  const totals = db
    .prepare(
      `SELECT coalesce(sum(document_count), 0) AS docs, coalesce(sum(chunk_count), 0) AS chunks
       FROM documents WHERE listing_id = ?`,
    )
    .get(row.listing_id);
  db.prepare(`UPDATE listings SET document_count = ?, chunk_count = ?, updated_at = ? WHERE id = ?`).run(
    totals.docs,
    totals.chunks,
    now,
    row.listing_id,
  );
  return { row, documentCount: totals.docs, chunkCount: totals.chunks };
}

/**
 * Removes listing `id` with its whole knowledge base: its vector tables dropped, its documents, chunks
 * (whose trigger clears their full-text rows), float blobs, sign codes, credentials, evaluation runs and
 * uploads by cascade or here. Call it inside a write transaction. Whether there was such a listing.
 */
export function deleteListingRows(db, id, { rebuildIndexes = true } = {}) {
  // Names come from the store's own vector_indexes rows, never from input.
  for (const { table_name: table } of vectorIndexes(db, id)) db.exec(`DROP TABLE IF EXISTS "${table}"`);
  const chunks = db.prepare(`SELECT chunk_count FROM listings WHERE id = ?`).pluck().get(id) ?? 0;
  const rebuild = rebuildIndexes && chunks > 0 && rebuildFaster(chunks, allChunks(db));
  const { changes } = withFullTextRemoved(db, rebuild, () =>
    db.prepare(`DELETE FROM listings WHERE id = ?`).run(id),
  );
  db.prepare(`DELETE FROM uploads WHERE listing_id = ?`).run(id);
  return changes > 0;
}

/**
 * Removes listing `id` as deleteListingRows does, only while it is a draft (a published listing may have
 * buyers): 'deleted', 'published' (nothing removed) or 'missing'. Call it inside a write transaction.
 */
export function deleteDraftListingRows(db, id, options) {
  const status = db.prepare(`SELECT status FROM listings WHERE id = ?`).pluck().get(id);
  if (status === undefined) return 'missing';
  if (status !== 'draft') return 'published';
  deleteListingRows(db, id, options);
  return 'deleted';
}
