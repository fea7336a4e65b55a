import { InvalidInput } from '../../errors';
import type { BeirQuery } from './beir';
import { mean, median, ndcgAt, recallAt, reciprocalRank } from './metrics';

/** One query's ranking: corpus ids, best first (already de-duplicated), and how long it took. */
export interface EvalHits {
  ids: string[];
  latencyMs: number;
}

export interface QueryReport {
  id: string;
  text: string;
  ndcg: number;
  recallAtK: number;
  recallAt100: number;
  reciprocalRank: number;
  latencyMs: number;
  /** Judged-relevant documents of the query (grade > 0). */
  relevant: number;
  /** The first k corpus ids retrieved. */
  top: string[];
}

export interface EvalReport {
  k: number;
  ndcg: number;
  recallAtK: number;
  recallAt100: number;
  mrr: number;
  /** Queries evaluated: those with judgments. */
  queries: number;
  /** Queries without any judgment in the qrels, skipped. */
  skipped: number;
  p50LatencyMs: number;
  perQuery: QueryReport[];
}

export interface EvaluateOptions {
  queries: BeirQuery[];
  qrels: ReadonlyMap<string, ReadonlyMap<string, number>>;
  k: number;
  search(text: string): Promise<EvalHits>;
  onQuery?(done: number, total: number): void;
}

/**
 * The queries with a judgment in the qrels. None is a 400: a run of zeros would read as a real result
 * in the comparison of runs.
 */
export function judgedQueries<Q extends { id: string }>(
  queries: readonly Q[],
  qrels: ReadonlyMap<string, unknown>,
): Q[] {
  const judged = queries.filter((q) => qrels.has(q.id));
  if (judged.length === 0) {
    throw new InvalidInput(
      `qrels: no query has a judgment (${queries.length} queries, ${qrels.size} judged query ids): the wrong qrels file, or query ids written differently?`,
    );
  }
  return judged;
}

/** Runs every judged query in order and averages the metrics over them (macro average). */
export async function evaluate(options: EvaluateOptions): Promise<EvalReport> {
  const { k, qrels } = options;
  const judged = judgedQueries(options.queries, qrels);
  const perQuery: QueryReport[] = [];
  for (const query of judged) {
    const judgments = qrels.get(query.id)!;
    const hits = await options.search(query.text);
    perQuery.push({
      id: query.id,
      text: query.text,
      ndcg: ndcgAt(hits.ids, judgments, k),
      recallAtK: recallAt(hits.ids, judgments, k),
      recallAt100: recallAt(hits.ids, judgments, 100),
      reciprocalRank: reciprocalRank(hits.ids, judgments),
      latencyMs: hits.latencyMs,
      relevant: [...judgments.values()].filter((g) => g > 0).length,
      top: hits.ids.slice(0, k),
    });
    options.onQuery?.(perQuery.length, judged.length);
  }
  return {
    k,
    ndcg: mean(perQuery.map((q) => q.ndcg)),
    recallAtK: mean(perQuery.map((q) => q.recallAtK)),
    recallAt100: mean(perQuery.map((q) => q.recallAt100)),
    mrr: mean(perQuery.map((q) => q.reciprocalRank)),
    queries: perQuery.length,
    skipped: options.queries.length - judged.length,
    p50LatencyMs: median(perQuery.map((q) => q.latencyMs)),
    perQuery,
  };
}

/** Corpus ids of ranked chunks in order, each once (a long document may have several chunks). */
export function corpusIdsOf(chunks: { sourceMetadata: Record<string, unknown> }[]): string[] {
  const ids = new Set<string>();
  for (const chunk of chunks) {
    const id = chunk.sourceMetadata.corpusId;
    if (typeof id === 'string') ids.add(id);
  }
  return [...ids];
}
