import { hash } from 'node:crypto';
import { join } from 'node:path';
import { BULK_LIMITS } from '../src/core/ingest/limits';
import type { StagedChunk } from '../src/core/ingest/store';
import type { StudioServices } from '../src/db/services';
import type { Rng } from './prng';

/** The hosted model of each benchmark dimension: the listing's model decides how queries are embedded. */
export const MODEL_OF_DIMENSIONS: Record<number, string> = {
  1024: 'embed-english-v3.0',
  1536: 'text-embedding-3-small',
  3072: 'text-embedding-3-large',
};

/** Every chunk carries `bucket` (0..99): `{bucket: 7}` keeps 1% of the rows. */
export const BUCKETS = 100;

/**
 * Seeded clustered unit vectors in two levels, as embeddings of a corpus are (topics, and within a
 * topic the passages about one thing): `clusters` random topic centres (components uniform in [-1, 1]),
 * `SUBTOPICS` sub-centres around each (offsets of `subSpread` times that scale), each vector a sub-centre
 * plus uniform noise of `spread` times that scale, normalized. Queries are drawn the same way.
 */
export class ClusteredVectors {
  private readonly centres: Float32Array[];

  constructor(
    private readonly rng: Rng,
    readonly dimensions: number,
    clusters: number,
    private readonly spread = 0.35,
    subSpread = 0.6,
  ) {
    this.centres = [];
    for (let c = 0; c < clusters; c++) {
      const topic = this.uniform(1);
      for (let s = 0; s < SUBTOPICS; s++) {
        const sub = this.uniform(subSpread);
        for (let i = 0; i < sub.length; i++) sub[i]! += topic[i]!;
        this.centres.push(sub);
      }
    }
  }

  next(): Float32Array {
    const centre = this.centres[this.rng.int(this.centres.length)]!;
    const v = this.uniform(this.spread);
    let norm = 0;
    for (let i = 0; i < v.length; i++) {
      v[i]! += centre[i]!;
      norm += v[i]! * v[i]!;
    }
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < v.length; i++) v[i]! *= scale;
    return v;
  }

  private uniform(scale: number): Float32Array {
    const v = new Float32Array(this.dimensions);
    for (let i = 0; i < v.length; i++) v[i] = (this.rng.next() * 2 - 1) * scale;
    return v;
  }
}

/** Sub-centres per topic. */
export const SUBTOPICS = 20;

/** Input coordinates summed into each output coordinate of TextProjection. */
const PROJECTION_TERMS = 8;

/**
 * The offline model's sentence vectors (100 dimensions) carried to `dimensions` by a seeded sparse random
 * projection (each output coordinate a signed sum of PROJECTION_TERMS input ones, then unit length),
 * which keeps their cosines on average: vectors whose neighbours are the texts' neighbours, as a hosted
 * model's are, at the dimensions of one, without its weights.
 */
export class TextProjection {
  private readonly inputs: Uint16Array;
  private readonly signs: Float32Array;

  constructor(
    rng: Rng,
    readonly dimensions: number,
    private readonly from: number,
  ) {
    this.inputs = new Uint16Array(dimensions * PROJECTION_TERMS);
    this.signs = new Float32Array(dimensions * PROJECTION_TERMS);
    for (let i = 0; i < this.inputs.length; i++) {
      this.inputs[i] = rng.int(from);
      this.signs[i] = rng.next() < 0.5 ? -1 : 1;
    }
  }

  /** The projected vector; the zero vector (a text without a known word) stays zero. */
  project(v: Float32Array): Float32Array {
    if (v.length !== this.from) throw new Error(`expected ${this.from} dimensions, got ${v.length}`);
    const out = new Float32Array(this.dimensions);
    let norm = 0;
    for (let j = 0, k = 0; j < this.dimensions; j++) {
      let sum = 0;
      for (let t = 0; t < PROJECTION_TERMS; t++, k++) sum += this.signs[k]! * v[this.inputs[k]!]!;
      out[j] = sum;
      norm += sum * sum;
    }
    if (norm > 0) {
      const scale = 1 / Math.sqrt(norm);
      for (let j = 0; j < out.length; j++) out[j]! *= scale;
    }
    return out;
  }
}

export interface BuildTimes {
  stagingMs: number;
  /** The knowledge-base commit (chunk rows, FTS, vec0, float blobs, codes) in one transaction. */
  commitMs: number;
}

/**
 * `count` chunks with clustered vectors committed through the knowledge-base store (as a JSONL import
 * does after reading its lines), in documents of 10,000 chunks.
 */
export async function buildDenseKnowledgeBase(
  services: StudioServices,
  listingId: string,
  dataDir: string,
  vectors: ClusteredVectors,
  count: number,
  /** Chunk n's text (default: `Synthetic chunk n`). */
  textOf: (n: number) => string = (n) => `Synthetic chunk ${n}`,
  /** The vectors of a batch of texts (default: the next clustered vectors, whatever the texts). */
  vectorsOf?: (texts: string[]) => Promise<Float32Array[]>,
): Promise<BuildTimes> {
  const model = MODEL_OF_DIMENSIONS[vectors.dimensions]!;
  const started = performance.now();
  const store = services.knowledgeBase;
  const staging = store.createStaging(join(dataDir, 'tmp'));
  try {
    const perDocument = 10_000;
    for (let d = 0; d * perDocument < count; d++) {
      const size = Math.min(perDocument, count - d * perDocument);
      const writer = staging.open({
        source: `vectors-${d + 1}.jsonl`,
        format: 'jsonl',
        // A SHA-256 as ingestion stores (of the name: no such file is kept), so the studio can open it.
        contentHash: hash('sha256', `vectors-${d + 1}`, 'hex'),
        bytes: 0,
        metadata: {},
      });
      for (let at = 0; at < size; at += 1_000) {
        const numbers = Array.from(
          { length: Math.min(size, at + 1_000) - at },
          (_v, i) => d * perDocument + at + i,
        );
        const texts = numbers.map(textOf);
        const batchVectors = vectorsOf ? await vectorsOf(texts) : texts.map(() => vectors.next());
        const batch: StagedChunk[] = numbers.map((n, i) => ({
          text: texts[i]!,
          // Not read by retrieval: a rough count, as the store needs one.
          tokenCount: texts[i]!.split(' ').length,
          contentHash: `c${n}`,
          metadata: { bucket: n % BUCKETS },
          vector: batchVectors[i]!,
        }));
        writer.add(batch);
      }
      writer.finish();
    }
    const stagingMs = performance.now() - started;
    const committing = performance.now();
    await store.commit(listingId, staging, {
      model,
      dimensions: vectors.dimensions,
      maxChunks: BULK_LIMITS.maxChunks,
      maxKnowledgeBaseBytes: null,
    });
    return { stagingMs, commitMs: performance.now() - committing };
  } finally {
    staging.dispose();
  }
}
