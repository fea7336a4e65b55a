// Removing a document, or a draft listing with its knowledge base: shared by the server's connection
// (small deletions, tests) and the commit worker (commitWorker.mjs), which runs them off the server's
// thread. Deleting a 450,000-chunk import takes most of a minute, row by row in the vector index and the
// full-text index, and on the server's thread it stopped every request for that long
// (docs/performance.md, "Deletions at scale").
// Plain JavaScript: it runs as it is inside the worker.

/**
 * Removes document `id` with its chunks, their full-text rows (by trigger), their vectors in every index
 * of the listing, float blobs and sign codes (by cascade), and updates the listing's counters. Call it
 * inside a write transaction. Returns the document's row as it was and the listing's new totals, or
 * undefined when there is no such document.
 */
export function deleteDocumentRows(db, id, now) {
  const row = db.prepare(`SELECT * FROM documents WHERE id = ?`).get(id);
  if (!row) return undefined;
  const tables = db
    .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`)
    .pluck()
    .all(row.listing_id);
  // vec0 has no foreign key: its rows go first, found through the chunks they belong to. The names come
  // from the store's own vector_indexes rows, never from input.
  for (const table of tables) {
    db.prepare(`DELETE FROM ${table} WHERE rowid IN (SELECT id FROM chunks WHERE document_id = ?)`).run(id);
  }
  db.prepare(`DELETE FROM embeddings WHERE chunk_id IN (SELECT id FROM chunks WHERE document_id = ?)`).run(
    id,
  );
  db.prepare(`DELETE FROM chunks WHERE document_id = ?`).run(id);
  db.prepare(`DELETE FROM documents WHERE id = ?`).run(id);
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
export function deleteListingRows(db, id) {
  const tables = db.prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`).pluck().all(id);
  // Names come from the store's own vector_indexes rows, never from input.
  for (const table of tables) db.exec(`DROP TABLE IF EXISTS "${table}"`);
  const { changes } = db.prepare(`DELETE FROM listings WHERE id = ?`).run(id);
  db.prepare(`DELETE FROM uploads WHERE listing_id = ?`).run(id);
  return changes > 0;
}

/**
 * Removes listing `id` as deleteListingRows does, only while it is a draft (a published listing may have
 * buyers): 'deleted', 'published' (nothing removed) or 'missing'. Call it inside a write transaction.
 */
export function deleteDraftListingRows(db, id) {
  const status = db.prepare(`SELECT status FROM listings WHERE id = ?`).pluck().get(id);
  if (status === undefined) return 'missing';
  if (status !== 'draft') return 'published';
  deleteListingRows(db, id);
  return 'deleted';
}
