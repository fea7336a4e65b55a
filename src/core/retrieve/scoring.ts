/**
 * Relevance scores in [0, 1] that mean the same thing for every query (docs/retrieval.md): each part
 * depends only on the query, the chunk and the corpus statistics, never on which other chunks were
 * retrieved alongside it.
 */

/** FTS5's bm25() constants (fixed in SQLite's fts5_aux.c). */
export const BM25_K1 = 1.2;

/**
 * Weight of the dense part in hybrid scores, measured on dbpedia-5k (docs/retrieval.md): the lexical
 * part carries most of the ranking, the embedding model lifts what BM25 half-finds.
 */
export const DENSE_WEIGHT = 0.3;

/** Corpus statistics of a lexical query: rows indexed and, per phrase, the rows containing it. */
export interface LexicalStats {
  rows: number;
  /** Exact below rows / 2; any value from rows / 2 up means "in at least half of the rows". */
  docFreq: number[];
  /**
   * Per phrase, whether any chunk of the listing searched holds it (absent: all that are in the index).
   * The index holds every local listing: a word found only in another one weighed in the ceiling of
   * this one and lowered every score there (0.717 -> 0.557 for a CSV row once a 5,000-document
   * listing shared the index).
   */
  inListing?: boolean[];
}

/** FTS5's idf: never below 1e-6, so a very common phrase still counts a little. */
export function bm25Idf(rows: number, docFreq: number): number {
  const idf = Math.log((rows - docFreq + 0.5) / (docFreq + 0.5));
  return idf > 0 ? idf : 1e-6;
}

export interface WeightedPhrase {
  phrase: string;
  idf: number;
}

/**
 * The phrases that carry weight, with their idf: those present in the listing searched and in fewer
 * than half of the index's rows. FTS5 gives the others an idf of 1e-6, i.e. none, while matching them costs a pass over most
 * of the index, so they are left out. When every phrase present is that common (a query of stop words,
 * or a knowledge base of one or two chunks), they are all kept: their equal idfs cancel out in the
 * share of the ceiling, which then still says how much of the query a chunk matches.
 */
export function weightedPhrases(phrases: string[], stats: LexicalStats): WeightedPhrase[] {
  const present = phrases.flatMap((phrase, i) => {
    const n = stats.docFreq[i]!;
    return n > 0 && stats.inListing?.[i] !== false ? [{ phrase, n }] : [];
  });
  const informative = present.filter((p) => p.n < stats.rows / 2);
  return (informative.length > 0 ? informative : present).map((p) => ({
    phrase: p.phrase,
    idf: bm25Idf(stats.rows, p.n),
  }));
}

/**
 * The BM25 score no chunk can reach: every weighted phrase with unbounded frequency, each contributing
 * idf · (k1 + 1). Dividing by it gives "the share of the query's weight a chunk matches", comparable
 * across queries of any length.
 */
export function bm25Ceiling(weighted: WeightedPhrase[]): number {
  return weighted.reduce((sum, w) => sum + w.idf * (BM25_K1 + 1), 0);
}

const clamp01 = (x: number) => (x > 1 ? 1 : x > 0 ? x : 0);

/** A BM25 score (positive, larger is better) as a share of the query's ceiling. */
export function lexicalScore(bm25: number, ceiling: number): number {
  return ceiling > 0 ? clamp01(bm25 / ceiling) : 0;
}

/** Cosine similarity from a cosine distance (1 - cos), negatives (opposed vectors) as 0. */
export function denseScore(cosineDistance: number): number {
  return clamp01(1 - cosineDistance);
}

/** The hybrid score: a convex combination, so it stays in [0, 1]. */
export function hybridScore(dense: number, lexical: number, denseWeight = DENSE_WEIGHT): number {
  return denseWeight * dense + (1 - denseWeight) * lexical;
}

/**
 * The FTS5 query of a text: its words, each a quoted phrase, OR-ed. Words are runs of letters,
 * digits and private-use characters, the characters FTS5's unicode61 tokenizer keeps, so each phrase
 * is one token; repeats (ignoring case) are dropped so each word counts once.
 */
export function lexicalPhrases(text: string): string[] {
  const seen = new Set<string>();
  const phrases: string[] = [];
  for (const word of text.normalize('NFC').match(/[\p{L}\p{N}\p{Co}]+/gu) ?? []) {
    const key = word.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    phrases.push(`"${word}"`);
  }
  return phrases;
}
