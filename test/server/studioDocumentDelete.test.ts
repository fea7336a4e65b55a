import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, studioWithDocuments, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let listingId: string;
beforeAll(async () => {
  ({ studio, listingId } = await studioWithDocuments([
    'layout-parser-paper-fast.pdf',
    'stanley-cups.csv',
    'arbitrary-records.json',
  ]));
});
afterAll(() => studio.close());

const studioFetch = (path: string, init?: RequestInit) => studio.studioFetch(path, init);

interface Doc {
  id: string;
  source: string;
  chunkCount: number;
}

const documents = async (): Promise<Doc[]> =>
  (await json(await studioFetch(`/studio/listings/${listingId}/documents`))).data as Doc[];

/** Rows of the document's chunks left in each table that holds them (the vector index by rowid). */
function rowsLeft(documentId: string, chunkIds: number[]) {
  const db = studio.services.db;
  const vectorTable = db
    .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`)
    .pluck()
    .get(listingId) as string;
  const inList = chunkIds.join(',');
  const count = (sql: string) => db.prepare(sql).pluck().get() as number;
  return {
    chunks: count(`SELECT count(*) FROM chunks WHERE document_id = '${documentId}'`),
    embeddings: count(`SELECT count(*) FROM embeddings WHERE chunk_id IN (${inList})`),
    codes: count(`SELECT count(*) FROM vector_codes WHERE chunk_id IN (${inList})`),
    vectors: count(`SELECT count(*) FROM ${vectorTable} WHERE rowid IN (${inList})`),
    fullText: count(`SELECT count(*) FROM chunks_fts WHERE rowid IN (${inList})`),
  };
}

describe('DELETE /studio/documents/:id', () => {
  it('deletes on a worker: the server keeps answering while the deletion waits for the write lock', async () => {
    const pdf = (await documents()).find((d) => d.source === 'layout-parser-paper-fast.pdf')!;
    const csv = (await documents()).find((d) => d.source === 'stanley-cups.csv')!;
    const chunkIds = studio.services.db
      .prepare(`SELECT id FROM chunks WHERE document_id = ?`)
      .pluck()
      .all(pdf.id) as number[];
    expect(chunkIds.length).toBe(pdf.chunkCount);
    expect(rowsLeft(pdf.id, chunkIds)).toEqual({
      chunks: pdf.chunkCount,
      embeddings: pdf.chunkCount,
      codes: pdf.chunkCount,
      vectors: pdf.chunkCount,
      fullText: pdf.chunkCount,
    });

    // Another writer (another process's commit, say) holds the write lock: the deletion must wait for it.
    // On the server's thread that wait (and a long deletion itself) stopped every request.
    const other = new Database(studio.services.db.name);
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const deletion = studioFetch(`/studio/documents/${pdf.id}`, { method: 'DELETE' }).finally(() => {
      settled = true;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const info = await studioFetch('/studio/info');
      expect(info.status).toBe(200);
      // Reads meanwhile see the knowledge base as it was.
      expect((await documents()).map((d) => d.id)).toContain(pdf.id);
      expect(settled).toBe(false);
    } finally {
      other.exec('COMMIT');
      other.close();
    }

    const res = await deletion;
    expect(res.status).toBe(200);
    const body = (await json(res)).data;
    expect(body.document).toMatchObject({ id: pdf.id, source: pdf.source, listingId });
    expect(body.chunkCount).toBe((await documents()).reduce((n, d) => n + d.chunkCount, 0));
    expect((await documents()).map((d) => d.id)).not.toContain(pdf.id);
    expect(rowsLeft(pdf.id, chunkIds)).toEqual({
      chunks: 0,
      embeddings: 0,
      codes: 0,
      vectors: 0,
      fullText: 0,
    });
    const listing = (await json(await studioFetch(`/studio/listings/${listingId}`))).data;
    expect(listing).toMatchObject({ documentCount: body.documentCount, chunkCount: body.chunkCount });
    // The other documents are untouched.
    expect((await documents()).find((d) => d.id === csv.id)).toMatchObject({ chunkCount: csv.chunkCount });
  });

  it('answers 404 for a document already deleted, and names a JSON item as part of its file', async () => {
    const json0 = (await documents()).find((d) => d.source === 'arbitrary-records.json')!;
    const item = await studioFetch(`/studio/documents/${json0.id}.0`, { method: 'DELETE' });
    expect(item.status).toBe(404);
    expect((await json(item)).error.message).toContain(
      "it is item 0 of the JSON file 'arbitrary-records.json'",
    );

    const first = await studioFetch(`/studio/documents/${json0.id}`, { method: 'DELETE' });
    expect(first.status).toBe(200);
    const again = await studioFetch(`/studio/documents/${json0.id}`, { method: 'DELETE' });
    expect(again.status).toBe(404);
    expect((await json(again)).error.message).toBe(`No document '${json0.id}'.`);
  });

  it('answers 404 when the document goes while its deletion waits its turn', async () => {
    const csv = (await documents()).find((d) => d.source === 'stanley-cups.csv')!;
    const both = await Promise.all([
      studioFetch(`/studio/documents/${csv.id}`, { method: 'DELETE' }),
      studioFetch(`/studio/documents/${csv.id}`, { method: 'DELETE' }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 404]);
    expect(await documents()).toEqual([]);
  });
});
