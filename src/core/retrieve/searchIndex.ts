import type { QueryCharge } from '../marketplace/credentials';
import type { FieldFilter } from './filters';
import type { LexicalStats } from './scoring';

/** A chunk id with its raw BM25 score (positive, larger is better). */
export interface LexicalHit {
  id: number;
  bm25: number;
}

/** A chunk id with its cosine distance to the query vector (0 = same direction). */
export interface DenseHit {
  id: number;
  distance: number;
}

export interface StoredChunk {
  id: number;
  text: string;
  metadata: Record<string, unknown>;
}

export interface QueryLogEntry {
  id: string;
  listingId: string;
  apiKeyId: string | null;
  wallet: string | null;
  query: string;
  topK: number;
  resultCount: number;
  latencyMs: number;
  createdAt: string;
  /** The metadata keys the query filtered on (none: no filters). */
  filterKeys?: string[];
  /** A per-query debit, applied in the same transaction as the row (refused: nothing is written). */
  charge?: QueryCharge;
}

/**
 * What retrieval needs from storage: full-text and vector search inside one listing, with metadata
 * filters applied inside the search (never to an already truncated top list).
 */
export interface SearchIndex {
  /** The best `limit` chunks of the listing matching any phrase, best first. */
  lexicalSearch(listingId: string, phrases: string[], filters: FieldFilter[], limit: number): LexicalHit[];
  /**
   * `lexicalSearch`, started where it can run beside what the caller does next (another thread); the
   * returned join waits for its hits. Absent, or where it cannot, the search runs at the join.
   * Hybrid starts it from the dense search's `whenAlone`, so the two threads do not contend for the
   * cores with the dense scan's own two.
   */
  startLexicalSearch?(
    listingId: string,
    phrases: string[],
    filters: FieldFilter[],
    limit: number,
  ): () => LexicalHit[];
  /**
   * Undefined, or a promise that settles once what a search of the listing needs, and a server just
   * started is still loading in the background, is held (each within a bound): the full-text postings
   * taken from the file an earlier process saved, the listing's search codes being read a slice at a time.
   * The first queries after a start then wait a fraction of a second beside their query embedding, rather
   * than take the slower full-text path (0.2-2 s a query at 500,000 chunks) or read every code again on the
   * server's thread (about a second, during which it answers nothing).
   */
  searchReady?(
    listingId: string,
    model: string,
    parts: { lexical: boolean; dense: boolean },
  ): Promise<void> | undefined;
  /** BM25 scores of the given chunks for the phrases; chunks matching none are left out. */
  lexicalScores(phrases: string[], ids: number[]): LexicalHit[];
  /**
   * Rows in the full-text index and how many contain each phrase (BM25's idf inputs), and whether the
   * listing holds each phrase at all.
   */
  lexicalStats(phrases: string[], listingId: string): LexicalStats;
  /**
   * The `limit` chunks of the listing nearest to `vector` under its model, nearest first: exact over
   * the chunks passing `filters` when there are any. When fewer than `limit` chunks with a vector pass,
   * chunks without one (no direction: a text with no word the model knows) follow at distance 1.
   * `whenAlone`, when given, is called once the search no longer needs a second thread (after a scan
   * split over two; at the latest before it returns): hybrid starts its full-text search there.
   */
  denseSearch(
    listingId: string,
    model: string,
    vector: Float32Array,
    filters: FieldFilter[],
    limit: number,
    whenAlone?: () => void,
  ): DenseHit[];
  /**
   * The largest `limit` the dense search answers at the cost of answering `limit` (Infinity: its cost
   * does not grow with it). Hybrid mode asks for that many first (rankChunks); absent, FIRST_DENSE_POOL.
   */
  denseLimitAtCost?(listingId: string, model: string, limit: number): number;
  /**
   * The first `limit` chunks of the listing passing `filters`, by id: what a query without direction (no
   * word the model knows: the zero vector) ranks in the dense part, where every chunk scores 0.
   */
  firstChunks(listingId: string, filters: FieldFilter[], limit: number): number[];
  /** Distances of the given chunks; chunks without a vector are left out. */
  denseScores(listingId: string, model: string, vector: Float32Array, ids: number[]): DenseHit[];
  chunks(ids: number[]): StoredChunk[];
  logQuery(entry: QueryLogEntry): void;
}
