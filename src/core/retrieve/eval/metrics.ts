/**
 * Standard ranking metrics over one query's ranked document ids and its graded judgments
 * (grade > 0 = relevant). Documents without a judgment count as not relevant.
 */
export type Judgments = ReadonlyMap<string, number>;

const gain = (judgments: Judgments, id: string) => Math.max(0, judgments.get(id) ?? 0);

/**
 * nDCG@k as in BEIR / trec_eval: gain = grade, discount log2(rank + 1), the ideal DCG from ALL
 * relevant judged documents of the query (not only the retrieved ones). 0 when none is relevant.
 */
export function ndcgAt(ranked: readonly string[], judgments: Judgments, k: number): number {
  let dcg = 0;
  ranked.slice(0, k).forEach((id, i) => {
    dcg += gain(judgments, id) / Math.log2(i + 2);
  });
  const ideal = [...judgments.values()]
    .filter((g) => g > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return ideal > 0 ? dcg / ideal : 0;
}

/** The share of the query's relevant documents found in the top k. 0 when none is relevant. */
export function recallAt(ranked: readonly string[], judgments: Judgments, k: number): number {
  const relevant = [...judgments.values()].filter((g) => g > 0).length;
  if (relevant === 0) return 0;
  return ranked.slice(0, k).filter((id) => gain(judgments, id) > 0).length / relevant;
}

/** 1 / rank of the first relevant document, 0 when none was retrieved. */
export function reciprocalRank(ranked: readonly string[], judgments: Judgments): number {
  const at = ranked.findIndex((id) => gain(judgments, id) > 0);
  return at < 0 ? 0 : 1 / (at + 1);
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The median (mean of the middle two for an even count); 0 for none. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
