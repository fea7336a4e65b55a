import type { RetrievalMode } from '../../shared/retrieval';
import type { FieldFilter } from './filters';
import { bm25Ceiling, DENSE_WEIGHT, denseScore, hybridScore, lexicalScore, weightedPhrases } from './scoring';
import type { DenseHit, LexicalHit, SearchIndex } from './searchIndex';

/** Candidates taken from each of the full-text and the vector search before fusing. */
export const CANDIDATES_PER_SEARCH = 100;

export interface RankQuery {
  listingId: string;
  /** The listing's embedding model (names its vector index). */
  model: string;
  mode: RetrievalMode;
  /** FTS5 phrases of the query (see lexicalPhrases); ignored in dense mode. */
  phrases: string[];
  /** The query's vector, or null: lexical mode, or a query without a word the model knows. */
  vector: Float32Array | null;
  filters: FieldFilter[];
  topK: number;
  minScore: number;
  denseWeight?: number;
  /**
   * The dense pool hybrid mode asks for first (default: what the index answers at topK's cost, else
   * FIRST_DENSE_POOL; CANDIDATES_PER_SEARCH: all at once).
   */
  firstDensePool?: number;
  /** Told, when a first pool smaller than the full one was asked, whether it had to be widened. */
  onDensePool?: (widened: boolean) => void;
}

export interface RankedChunk {
  id: number;
  score: number;
  /** The two parts, each in [0, 1]; 0 for a part the mode does not use. */
  dense: number;
  lexical: number;
}

/** How far the dense search is widened to take every chunk tied at its cut (see denseUpToTies). */
const MAX_TIED_WIDENING = 1024;

/**
 * The dense pool hybrid mode asks for first when the index does not say what its search answers at the
 * cost of topK (SearchIndex.denseLimitAtCost). The SQLite binary first pass rescores max(400, 8 × limit)
 * candidates at 512+ dimensions, so about 50 cost what topK 20 costs, where the full pool of 100 rescores 800:
 * at 500k × 1,024 that was most of a hybrid query. The full pool is asked only when a chunk beyond the
 * first could still reach the top (see rankChunks).
 */
export const FIRST_DENSE_POOL = 50;

interface DensePool {
  hits: DenseHit[];
  /** The dense part no chunk left out of the pool can exceed; null when none was left out. */
  outside: number | null;
}

/**
 * The `limit` nearest chunks, plus every chunk tied in score with the last of them (up to
 * MAX_TIED_WIDENING): a KNN cuts ties at its k arbitrarily, so without them which of two identical
 * chunks (the same text in two files) came back would depend on topK, and not follow chunk id as the
 * final sort promises (docs/retrieval.md).
 */
function denseUpToTies(
  index: SearchIndex,
  query: RankQuery,
  limit: number,
  whenAlone?: () => void,
): DensePool {
  for (let k = limit; ; k *= 2) {
    const hits = index.denseSearch(
      query.listingId,
      query.model,
      query.vector!,
      query.filters,
      k + 1,
      whenAlone,
    );
    // Fewer than asked: every chunk passing the filters is here.
    if (hits.length <= k) return { hits, outside: null };
    // hits[k] is the nearest chunk past the first k, so no chunk left out is nearer.
    const outside = denseScore(hits[k]!.distance);
    if (k >= MAX_TIED_WIDENING) return { hits, outside };
    const cut = denseScore(hits[limit - 1]!.distance);
    if (outside !== cut) return { hits: hits.filter((hit) => denseScore(hit.distance) >= cut), outside };
  }
}

/**
 * The best `topK` chunks of a listing for a query, scored per docs/retrieval.md. In hybrid mode the
 * candidates of both searches are pooled and BOTH parts are computed exactly for every candidate (a
 * chunk the full-text search ranked 150th still gets its true BM25), so a chunk's score never depends
 * on what else was retrieved. Sorted by score, then by chunk id (insertion order) on ties.
 *
 * Hybrid pools the best 100 of each search, but first asks the dense search for as many as it answers at
 * the cost of topK (49 at 512+ dimensions on the binary first pass; all 100 where more costs nothing): a chunk
 * in neither pool has a dense part no higher than the best one the dense search left out and a lexical
 * part no higher than the full-text pool's last, so when their hybrid score is below the topK-th pooled
 * score no such chunk can reach the top, and the full pool of 100 would return the same chunks with the
 * same scores. Only otherwise is the dense pool widened to 100.
 */
export function rankChunks(index: SearchIndex, query: RankQuery): RankedChunk[] {
  const wantLexical = query.mode !== 'dense' && query.phrases.length > 0;
  const useDense = query.mode !== 'lexical' && query.vector !== null;
  // Only phrases that carry weight are searched: a word in most chunks adds nothing to BM25.
  const weighted = wantLexical
    ? weightedPhrases(query.phrases, index.lexicalStats(query.phrases, query.listingId))
    : [];
  const phrases = weighted.map((w) => w.phrase);
  const ceiling = bm25Ceiling(weighted);
  const useLexical = phrases.length > 0;
  const denseWeight = query.denseWeight ?? DENSE_WEIGHT;
  const lexical = new Map<number, number>();
  const dense = new Map<number, number>();
  const score = (id: number): RankedChunk => {
    const lex = useLexical && lexical.has(id) ? lexicalScore(lexical.get(id)!, ceiling) : 0;
    const den = useDense && dense.has(id) ? denseScore(dense.get(id)!) : 0;
    const value =
      query.mode === 'lexical' ? lex : query.mode === 'dense' ? den : hybridScore(den, lex, denseWeight);
    return { id, score: value, dense: den, lexical: lex };
  };
  const rank = (ids: Iterable<number>) =>
    [...ids].map(score).sort((a, b) => b.score - a.score || a.id - b.id);
  const top = (ranked: RankedChunk[]) => ranked.filter((r) => r.score >= query.minScore).slice(0, query.topK);

  if (!(useLexical && useDense)) {
    // A single mode ranks by its own part, so its topK is enough.
    if (useLexical) {
      for (const hit of index.lexicalSearch(query.listingId, phrases, query.filters, query.topK))
        lexical.set(hit.id, hit.bm25);
    }
    if (useDense)
      for (const hit of denseUpToTies(index, query, query.topK).hits) dense.set(hit.id, hit.distance);
    // A query without direction scores every chunk's dense part 0, so the first chunks by id are as near
    // as any: they follow the full-text hits, and topK chunks still come back whenever that many pass the
    // filter (not none, in dense mode).
    const tied =
      query.mode !== 'lexical' && query.vector === null
        ? index.firstChunks(query.listingId, query.filters, query.topK)
        : [];
    return top(rank(new Set([...lexical.keys(), ...dense.keys(), ...tied])));
  }

  // Fusing needs a pool from each search. Where the index can, the full-text one runs on another thread
  // beside the dense search's rescoring, started once the dense scan is done with the second core
  // (SearchIndex.startLexicalSearch, `whenAlone`).
  const limit = Math.max(CANDIDATES_PER_SEARCH, query.topK);
  let joinLexical: (() => LexicalHit[]) | undefined;
  const startLexical = () => {
    joinLexical ??=
      index.startLexicalSearch?.(query.listingId, phrases, query.filters, limit) ??
      (() => index.lexicalSearch(query.listingId, phrases, query.filters, limit));
  };
  // As many as the dense search answers at topK's cost (it asks one more, to see past its cut).
  const atCost = () => {
    const asked = index.denseLimitAtCost?.(query.listingId, query.model, query.topK + 1);
    return asked === undefined ? FIRST_DENSE_POOL : asked - 1;
  };
  const first = Math.min(limit, Math.max(query.topK, query.firstDensePool ?? atCost()));
  // (Should the dense search throw, the full-text one is left unjoined: the next search waits it out.)
  const firstPool = denseUpToTies(index, query, first, startLexical);
  startLexical();
  const lexicalHits = joinLexical!();
  for (const hit of lexicalHits) lexical.set(hit.id, hit.bm25);
  // The full-text search returns its best first: a chunk it left out scores no higher than its last.
  const lexicalOutside =
    lexicalHits.length >= limit ? lexicalScore(lexicalHits[lexicalHits.length - 1]!.bm25, ceiling) : 0;
  const lexicalAsked = new Set(lexical.keys());
  for (let pool = first; ; pool = limit) {
    const { hits, outside } = pool === first ? firstPool : denseUpToTies(index, query, pool);
    for (const hit of hits) dense.set(hit.id, hit.distance);
    if (pool === first) {
      const missingDense = [...lexical.keys()].filter((id) => !dense.has(id));
      for (const hit of index.denseScores(query.listingId, query.model, query.vector!, missingDense))
        dense.set(hit.id, hit.distance);
    }
    const missingLexical = hits.map((hit) => hit.id).filter((id) => !lexicalAsked.has(id));
    for (const id of missingLexical) lexicalAsked.add(id);
    for (const hit of index.lexicalScores(phrases, missingLexical)) lexical.set(hit.id, hit.bm25);
    const ranked = rank(new Set([...lexical.keys(), ...dense.keys()]));
    const kth = ranked.length >= query.topK ? ranked[query.topK - 1]!.score : -Infinity;
    const settled = outside === null || hybridScore(outside, lexicalOutside, denseWeight) < kth;
    if (pool < limit) query.onDensePool?.(!settled);
    if (settled || pool >= limit) return top(ranked);
  }
}
