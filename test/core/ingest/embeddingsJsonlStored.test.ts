import { describe, expect, it } from 'vitest';
import { listingPerTest } from '../../helpers/listingPerTest';

const kb = listingPerTest('Pre-built');

describe('pre-built embeddings (JSONL) as stored', () => {
  it("keeps a line's own `source` as `source_2` beside the file's name", async () => {
    const dims = kb.services().listings.get(kb.listingId(), 'studio').dimensions;
    const embedding = Array.from({ length: dims }, (_, i) => Math.sin(i + 1));
    const { outcome, chunks } = await kb.ingest(
      'e1.jsonl',
      `{"text":"First prebuilt chunk","embedding":${JSON.stringify(embedding)},"metadata":{"page":3,"source":"orig.pdf"}}\n`,
    );

    expect(outcome).toMatchObject({ source: 'e1.jsonl', status: 'ingested', chunks: 1 });
    expect(chunks).toEqual([
      {
        text: 'First prebuilt chunk',
        metadata: {
          page: 3,
          source_2: 'orig.pdf',
          line: 1,
          source: 'e1.jsonl',
          format: 'jsonl',
          documentId: expect.any(String),
          chunkIndex: 0,
        },
      },
    ]);
  });
});

describe('a pre-built embeddings file ingested again', () => {
  const db = () => kb.services().db;
  const lines = (word: string, n: number, dims: number) =>
    Array.from({ length: n }, (_, k) => {
      const embedding = Array.from({ length: dims }, (_, i) => Math.sin(k + i + word.length));
      return `{"text":"${word}${k} ${word} chunk","embedding":${JSON.stringify(embedding)}}\n`;
    }).join('');
  const matches = (word: string) =>
    db().prepare(`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`).pluck().get(word);
  /** The listing's vec0 rows, each against its float blob of record. */
  function expectVectorsOfRecord(count: number) {
    const table = db()
      .prepare(`SELECT table_name FROM vector_indexes WHERE listing_id = ?`)
      .pluck()
      .get(kb.listingId()) as string;
    const rows = db()
      .prepare(
        `SELECT e.vector AS floats, v.embedding AS indexed FROM embeddings e JOIN chunks c ON c.id = e.chunk_id
         LEFT JOIN ${table} v ON v.rowid = e.chunk_id WHERE c.listing_id = ?`,
      )
      .all(kb.listingId()) as { floats: Buffer; indexed: Buffer | null }[];
    expect(rows).toHaveLength(count);
    for (const row of rows) expect(row.indexed).toEqual(row.floats);
    expect(db().prepare(`SELECT count(*) FROM ${table}`).pluck().get()).toBe(count);
  }
  const integrity = () =>
    db().prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run();

  it('replaces the whole knowledge base it was, and keeps it when the new version is refused', async () => {
    const dims = kb.services().listings.get(kb.listingId(), 'studio').dimensions;
    await kb.ingest('import.jsonl', lines('otter', 40, dims));
    const again = await kb.ingest('import.jsonl', lines('heron', 60, dims));
    expect(again.outcome).toMatchObject({ status: 'ingested', chunks: 60 });
    expect(again.chunks).toHaveLength(60);
    expect([matches('otter'), matches('heron'), matches('heron59')]).toEqual([0, 60, 1]);
    expect(integrity).not.toThrow();
    expectVectorsOfRecord(60);

    // A third version whose 31st line has a vector of the wrong size: refused whole, the second stays.
    const bad = lines('egret', 30, dims) + `{"text":"short","embedding":[1,2,3]}\n`;
    const refused = await kb.ingest('import.jsonl', bad);
    expect(refused.outcome).toMatchObject({ status: 'rejected' });
    expect(refused.chunks).toHaveLength(60);
    expect([matches('egret'), matches('heron')]).toEqual([0, 60]);
    expect(integrity).not.toThrow();
    expectVectorsOfRecord(60);
  });
});
