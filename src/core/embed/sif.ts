import type { GloveTable } from './winkJson';

/**
 * Smooth inverse frequency (Arora, Liang & Ma, "A simple but tough-to-beat baseline for sentence
 * embeddings", ICLR 2017): a word counts a / (a + p(w)), so "the" adds almost nothing and rare words
 * nearly 1. The package has no counts, only frequency ranks, so p(w) follows Zipf's law over the
 * vocabulary: p(rank r) = 1 / (r · H_N), r from 1, H_N the N-th harmonic number.
 */
export const SIF_A = 1e-3;

/** How many of the most frequent words define the common direction removed from every embedding. */
export const COMMON_COMPONENT_WORDS = 50_000;

export function sifWeights(count: number, a: number = SIF_A): Float32Array {
  let harmonic = 0;
  for (let k = count; k >= 1; k--) harmonic += 1 / k;
  const weights = new Float32Array(count);
  for (let r = 0; r < count; r++) weights[r] = a / (a + 1 / ((r + 1) * harmonic));
  return weights;
}

/**
 * The first principal component (uncentered) of the most frequent words' vectors. Every GloVe vector
 * shares a large component along it that carries frequency, not meaning; SIF removes it from sentence
 * embeddings. The paper estimates it from the embedded corpus; the vocabulary's own top words give a
 * corpus-independent estimate, so an embedding never depends on what else was embedded.
 */
export function commonComponent(table: GloveTable, words: number = COMMON_COMPONENT_WORDS): Float64Array {
  const d = table.dimensions;
  const rows = Math.min(words, table.words.length);
  const cov = new Float64Array(d * d);
  const v = new Float64Array(d);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < d; i++) v[i] = table.vectors[r * d + i]!;
    for (let i = 0; i < d; i++) {
      const vi = v[i]!;
      for (let j = i; j < d; j++) cov[i * d + j]! += vi * v[j]!;
    }
  }
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) cov[i * d + j] = cov[j * d + i]!;
  // Power iteration from a fixed start: deterministic, and 200 rounds are plenty for a 100 × 100 matrix.
  let x = new Float64Array(d).fill(1 / Math.sqrt(d));
  for (let round = 0; round < 200; round++) {
    const y = new Float64Array(d);
    for (let i = 0; i < d; i++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += cov[i * d + j]! * x[j]!;
      y[i] = s;
    }
    const norm = Math.hypot(...y);
    if (norm === 0) return new Float64Array(d);
    for (let i = 0; i < d; i++) y[i] = y[i]! / norm;
    x = y;
  }
  return x;
}
