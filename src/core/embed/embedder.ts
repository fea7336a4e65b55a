/**
 * What ingestion and retrieval need from an embedding model. Documents and queries are told apart
 * because some models (Cohere v3) embed them differently; symmetric models ignore the kind.
 */
export type EmbedKind = 'document' | 'query';

export interface Embedder {
  /** The model id a listing records, e.g. 'kbs-offline-hybrid-v1'. */
  readonly model: string;
  readonly dimensions: number;
  /**
   * One Float32Array of `dimensions` values per text, in order, of unit length — except that a model
   * may return the zero vector for a text it has nothing to say about (the offline model: no known
   * word). Cosine similarity with a zero vector counts as 0 (see `cosineSimilarity`).
   */
  embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]>;
}

/** Vectors already computed, keyed by the text's content hash and the model. */
export interface EmbeddingCache {
  get(hash: string, model: string): Float32Array | undefined;
  set(hash: string, model: string, vector: Float32Array): void;
  /** Stores many at once (one transaction); falls back to `set` when absent. */
  setMany?(model: string, entries: Iterable<readonly [hash: string, vector: Float32Array]>): void;
}

/**
 * True for the zero vector a model returns for a text it has nothing to say about. Keep such vectors
 * out of sqlite-vec: its cosine distance to them is NULL, and NULL rows sort before real matches.
 */
export const isZeroVector = (v: Float32Array): boolean => v.every((x) => x === 0);

/** Cosine similarity, 0 when either vector is zero (a text without known words matches nothing). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length)
    throw new RangeError(`Cannot compare vectors of ${a.length} and ${b.length} dimensions.`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
