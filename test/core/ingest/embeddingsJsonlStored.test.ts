import { describe, expect, it } from 'vitest';
import { checkFullText, expectVectorsOfRecord } from '../../helpers/indexesOfRecord';
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

  it('replaces the whole knowledge base it was, and keeps it when the new version is refused', async () => {
    const dims = kb.services().listings.get(kb.listingId(), 'studio').dimensions;
    await kb.ingest('import.jsonl', lines('otter', 40, dims));
    const again = await kb.ingest('import.jsonl', lines('heron', 60, dims));
    expect(again.outcome).toMatchObject({ status: 'ingested', chunks: 60 });
    expect(again.chunks).toHaveLength(60);
    expect([matches('otter'), matches('heron'), matches('heron59')]).toEqual([0, 60, 1]);
    expect(() => checkFullText(db())).not.toThrow();
    expectVectorsOfRecord(db(), kb.listingId());
    expect(db().prepare(`SELECT count(*) FROM embeddings`).pluck().get()).toBe(60);

    // A third version whose 31st line has a vector of the wrong size: refused whole, the second stays.
    const bad = lines('egret', 30, dims) + `{"text":"short","embedding":[1,2,3]}\n`;
    const refused = await kb.ingest('import.jsonl', bad);
    expect(refused.outcome).toMatchObject({ status: 'rejected' });
    expect(refused.chunks).toHaveLength(60);
    expect([matches('egret'), matches('heron')]).toEqual([0, 60]);
    expect(() => checkFullText(db())).not.toThrow();
    expectVectorsOfRecord(db(), kb.listingId());
    expect(db().prepare(`SELECT count(*) FROM embeddings`).pluck().get()).toBe(60);
  });
});
