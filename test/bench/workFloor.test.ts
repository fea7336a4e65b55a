import { describe, expect, it } from 'vitest';
import {
  chunkTexts,
  timeOfflineEmbeddings,
  timeStoreSql,
  timeTokenCounts,
  type FloorCorpus,
} from '../../bench/workFloor';
import { countTokens } from '../../src/core/ingest/chunkers/tokenizer';

const vector = (seed: number): Float32Array =>
  Float32Array.from({ length: 100 }, (_, i) => Math.sin(seed * 7 + i) / 7);

/** Two documents, one chunk with a zero vector (kept out of the vector index, as the commit does). */
const corpus: FloorCorpus = {
  model: 'kbs-offline-hybrid-v1',
  dimensions: 100,
  documents: [
    {
      source: 'a.md',
      format: 'markdown',
      contentHash: 'a',
      bytes: 10,
      chunks: [
        {
          text: 'The Stanley Cup is awarded annually.',
          tokenCount: 8,
          contentHash: 'c1',
          metadata: {},
          vector: vector(1),
        },
        {
          text: 'Hockey teams compete for it.',
          tokenCount: 6,
          contentHash: 'c2',
          metadata: { row: 2 },
          vector: vector(2),
        },
      ],
    },
    {
      source: 'b.csv',
      format: 'csv',
      contentHash: 'b',
      bytes: 5,
      chunks: [
        { text: 'zzqx', tokenCount: 2, contentHash: 'c3', metadata: {}, vector: new Float32Array(100) },
      ],
    },
  ],
};

describe('timeStoreSql', () => {
  it.each(['design', 'studio'] as const)('writes and indexes every chunk (%s schema)', async (schema) => {
    // FTS5's integrity check fails unless every row's text is in the full-text index, and nothing else.
    const result = await timeStoreSql(corpus, schema, { verifyFullText: true });
    expect(result.chunks).toBe(3);
    expect(result.vectors).toBe(2);
    expect(result.ms).toBeGreaterThan(0);
  });
});

describe('timeTokenCounts', () => {
  it('counts every text once, as countTokens does', async () => {
    const texts = chunkTexts(corpus);
    expect(texts).toHaveLength(3);
    const result = await timeTokenCounts(texts, 2);
    expect(result.tokens).toBe(texts.reduce((sum, t) => sum + countTokens(t), 0));
    expect(result.ms).toBeGreaterThanOrEqual(0);
  });
});

describe('timeOfflineEmbeddings', () => {
  it('embeds every text with the offline model', async () => {
    const result = await timeOfflineEmbeddings(chunkTexts(corpus), 1);
    expect(result.ms).toBeGreaterThanOrEqual(0);
  });
});
