import type { RetrievalMode } from '../../shared/retrieval';
import type { FieldFilter } from './filters';
import { bm25Ceiling, DENSE_WEIGHT, denseScore, hybridScore, lexicalScore, weightedPhrases } from './scoring';
import type { SearchIndex } from './searchIndex';

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
 * The `limit` nearest chunks, plus every chunk tied in score with the last of them (up to
 * MAX_TIED_WIDENING): a KNN cuts ties at its k arbitrarily, so without them which of two identical
 * chunks (the same text in two files) came back would depend on topK, and not follow chunk id as the
 * final sort promises (docs/retrieval.md).
 */
function denseUpToTies(index: SearchIndex, query: RankQuery, limit: number) {
  for (let k = limit; ; k *= 2) {
    const hits = index.denseSearch(query.listingId, query.model, query.vector!, query.filters, k + 1);
    if (hits.length <= k || k >= MAX_TIED_WIDENING) return hits;
    const cut = denseScore(hits[limit - 1]!.distance);
    if (denseScore(hits[k]!.distance) !== cut) return hits.filter((hit) => denseScore(hit.distance) >= cut);
  }
}

/**
 * The best `topK` chunks of a listing for a query, scored per docs/retrieval.md. In hybrid mode the
 * candidates of both searches are pooled and BOTH parts are computed exactly for every candidate (a
 * chunk the full-text search ranked 150th still gets its true BM25), so a chunk's score never depends
 * on what else was retrieved. Sorted by score, then by chunk id (insertion order) on ties.
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
  // Fusing needs a pool from each search; a single mode ranks by its own part, so its topK is enough.
  const limit = useLexical && useDense ? Math.max(CANDIDATES_PER_SEARCH, query.topK) : query.topK;
  const lexical = new Map<number, number>();
  const dense = new Map<number, number>();

  if (useLexical) {
    for (const hit of index.lexicalSearch(query.listingId, phrases, query.filters, limit))
      lexical.set(hit.id, hit.bm25);
  }
  if (useDense) {
    for (const hit of denseUpToTies(index, query, limit)) dense.set(hit.id, hit.distance);
  }
  if (useLexical && useDense) {
    const missingLexical = [...dense.keys()].filter((id) => !lexical.has(id));
    const missingDense = [...lexical.keys()].filter((id) => !dense.has(id));
    for (const hit of index.lexicalScores(phrases, missingLexical)) lexical.set(hit.id, hit.bm25);
    for (const hit of index.denseScores(query.listingId, query.model, query.vector!, missingDense))
      dense.set(hit.id, hit.distance);
  }

  const ids = new Set([...lexical.keys(), ...dense.keys()]);
  const ranked: RankedChunk[] = [];
  for (const id of ids) {
    const lex = useLexical && lexical.has(id) ? lexicalScore(lexical.get(id)!, ceiling) : 0;
    const den = useDense && dense.has(id) ? denseScore(dense.get(id)!) : 0;
    const score =
      query.mode === 'lexical'
        ? lex
        : query.mode === 'dense'
          ? den
          : hybridScore(den, lex, query.denseWeight ?? DENSE_WEIGHT);
    if (score >= query.minScore) ranked.push({ id, score, dense: den, lexical: lex });
  }
  ranked.sort((a, b) => b.score - a.score || a.id - b.id);
  return ranked.slice(0, query.topK);
}
