import { describe, expect, it } from 'vitest';
import { knowledgeBaseChunking } from '../../../../src/core/retrieve/eval/runSettings';

const recursive512 = { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 };

describe('knowledgeBaseChunking', () => {
  it('names the settings every document shares', () => {
    expect(knowledgeBaseChunking([recursive512])).toEqual(recursive512);
  });

  it("says 'mixed' for each setting the documents differ on, and keeps the ones they share", () => {
    expect(
      knowledgeBaseChunking([recursive512, { strategy: 'recursive', chunkSize: 128, chunkOverlap: 64 }]),
    ).toEqual({ strategy: 'recursive', chunkSize: 'mixed', chunkOverlap: 64 });
    expect(
      knowledgeBaseChunking([recursive512, { strategy: 'sentence', chunkSize: 512, chunkOverlap: 0 }]),
    ).toEqual({ strategy: 'mixed', chunkSize: 512, chunkOverlap: 'mixed' });
  });

  it('counts documents with their own embeddings as pre-built, mixed with chunked ones', () => {
    expect(knowledgeBaseChunking([{}])).toEqual({
      strategy: 'pre-built',
      chunkSize: null,
      chunkOverlap: null,
    });
    expect(knowledgeBaseChunking([{}, recursive512])).toEqual({
      strategy: 'mixed',
      chunkSize: 512,
      chunkOverlap: 64,
    });
  });

  it('has nothing to say about an empty knowledge base', () => {
    expect(knowledgeBaseChunking([])).toEqual({ strategy: null, chunkSize: null, chunkOverlap: null });
  });
});
