import { describe, expect, it } from 'vitest';
import { corpusIdsOf, evaluate } from '../../../../src/core/retrieve/eval/evaluate';
import { median, ndcgAt, recallAt, reciprocalRank } from '../../../../src/core/retrieve/eval/metrics';

const judgments = new Map([
  ['a', 2],
  ['b', 1],
  ['c', 0],
  ['d', 1],
]);

describe('ranking metrics', () => {
  it('computes nDCG@k with graded gains and the ideal from all judged-relevant documents', () => {
    // DCG = 1/log2(2) [b] + 0 [c] + 2/log2(4) [a]; ideal = 2 + 1/log2(3) + 1/log2(4) (a, b, d).
    const dcg = 1 + 2 / 2;
    const ideal = 2 + 1 / Math.log2(3) + 1 / 2;
    expect(ndcgAt(['b', 'c', 'a'], judgments, 10)).toBeCloseTo(dcg / ideal, 12);
    expect(ndcgAt(['a', 'b', 'd'], judgments, 10)).toBeCloseTo(1, 12);
    // The ideal is cut at k too: with k = 1 only the best grade counts.
    expect(ndcgAt(['a', 'x'], judgments, 1)).toBeCloseTo(1, 12);
    expect(ndcgAt(['x', 'y'], judgments, 10)).toBe(0);
    expect(ndcgAt(['a'], new Map([['a', 0]]), 10)).toBe(0);
  });

  it('computes recall@k over the relevant documents and the reciprocal rank of the first', () => {
    expect(recallAt(['c', 'a', 'x', 'd'], judgments, 2)).toBeCloseTo(1 / 3, 12);
    expect(recallAt(['c', 'a', 'x', 'd'], judgments, 100)).toBeCloseTo(2 / 3, 12);
    expect(reciprocalRank(['c', 'x', 'd'], judgments)).toBeCloseTo(1 / 3, 12);
    expect(reciprocalRank(['c'], judgments)).toBe(0);
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
  });
});

describe('evaluate', () => {
  it('averages over judged queries, skips and counts the others, and maps chunks to corpus ids once', async () => {
    const qrels = new Map([
      ['q1', new Map([['d1', 1]])],
      ['q2', new Map([['d2', 2]])],
    ]);
    const hits: Record<string, string[]> = { one: ['d1', 'd3'], two: ['d3', 'd2'] };
    const report = await evaluate({
      queries: [
        { id: 'q1', text: 'one' },
        { id: 'q2', text: 'two' },
        { id: 'q3', text: 'unjudged' },
      ],
      qrels,
      k: 10,
      search: async (text) => ({ ids: hits[text]!, latencyMs: text.length }),
    });
    expect(report).toMatchObject({
      queries: 2,
      skipped: 1,
      mrr: (1 + 0.5) / 2,
      p50LatencyMs: 3,
      recallAt100: 1,
    });
    expect(report.ndcg).toBeCloseTo((1 + 1 / Math.log2(3)) / 2, 12);
    expect(report.perQuery.map((q) => q.top)).toEqual([
      ['d1', 'd3'],
      ['d3', 'd2'],
    ]);
    expect(
      corpusIdsOf([
        { sourceMetadata: { corpusId: 'x' } },
        { sourceMetadata: {} },
        { sourceMetadata: { corpusId: 'y' } },
        { sourceMetadata: { corpusId: 'x' } },
      ]),
    ).toEqual(['x', 'y']);
  });
});
