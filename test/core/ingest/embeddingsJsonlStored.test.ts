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
