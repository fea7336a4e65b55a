import { describe, expect, it } from 'vitest';
import { limitNotice } from '../../../src/renderer/src/features/ingest/knowledgeBaseLimits';

const MB = 1024 * 1024;
/** As /studio/info gives them (STUDIO_LIMITS, which the renderer cannot import). */
const STUDIO_LIMITS = {
  maxFileBytes: 50 * MB,
  maxKnowledgeBaseBytes: 500 * MB,
  maxArchiveBytes: 10 * 1024 * MB,
  maxChunks: 500_000,
};
const kb = (bytes: number, chunkCount: number) => ({
  listingId: 'lst_1',
  documentCount: 6,
  chunkCount,
  bytes,
});

describe('limitNotice', () => {
  it('says nothing within the limits, or before the size is known', () => {
    expect(limitNotice(undefined, STUDIO_LIMITS)).toBeUndefined();
    expect(limitNotice(kb(500 * MB - 1, 499_999), STUDIO_LIMITS)).toBeUndefined();
    expect(limitNotice(kb(900 * MB, 10), { ...STUDIO_LIMITS, maxKnowledgeBaseBytes: null })).toBeUndefined();
  });

  it('at the byte limit: the size against the limit, what a drop does, and the bulk upload', () => {
    expect(limitNotice(kb(2.1 * 1024 * MB, 40_000), STUDIO_LIMITS)).toEqual({
      title: 'This knowledge base is too large for ingestion from the studio',
      paragraphs: [
        'It holds 2.10 GB of documents; the studio ingests into a knowledge base of up to 500 MB (so does kbstudio ingest). A drop is refused at once, before anything is read, unless its files are new versions of documents it holds that bring it back to 500 MB or less.',
        "To add documents, send them as a bulk upload: POST /v1/upload with this listing's id as listing_id in its config, with an API key of the listing's wallet (API keys). Bulk uploads take a knowledge base of any size in bytes (up to 10 GB per archive, and 500,000 chunks).",
      ],
    });
    expect(limitNotice(kb(500 * MB, 1), STUDIO_LIMITS)?.paragraphs[0]).toMatch(
      /^It holds 500 MB of documents;/,
    );
  });

  it('at the chunk limit: no bulk upload offered (it has the same limit), but room to be made', () => {
    const chunks = limitNotice(kb(300 * MB, 500_000), STUDIO_LIMITS)!;
    expect(chunks.title).toBe('This knowledge base holds the most chunks it may (500,000)');
    expect(chunks.paragraphs).toEqual([
      'It holds 500,000 chunks; a knowledge base may hold 500,000, bulk uploads included. A new document is refused at once; a new version of a document it holds can still replace it. To make room, delete documents in Inspect, or put new documents in another listing.',
    ]);
    const both = limitNotice(kb(2.1 * 1024 * MB, 500_000), STUDIO_LIMITS)!;
    expect(both.title).toBe("This knowledge base is past the studio's limits");
    expect(both.paragraphs).toHaveLength(2);
    expect(both.paragraphs.join(' ')).not.toContain('/v1/upload');
  });
});
