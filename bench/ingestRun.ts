import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedEmbedder } from '../src/core/embed/cachedEmbedder';
import type { EmbeddingCache } from '../src/core/embed/embedder';
import { OFFLINE_MODEL, offlineGloveEmbedder } from '../src/core/embed/offlineGlove';
import { STUDIO_LIMITS } from '../src/core/ingest/limits';
import type { IngestProgress, IngestResult } from '../src/core/ingest/pipeline';
import { SqliteEmbeddingCache } from '../src/db/repositories/embeddingCache';
import { openServices, type StudioServices } from '../src/db/services';

/**
 * `shared`: the studio's embedder, whose cache (by chunk text) starts empty in each fresh data dir, so
 * byte-identical copies hit it after the first. `cold`: every cache lookup misses (writes still happen),
 * so each copy costs what unique text would.
 */
export type CacheMode = 'shared' | 'cold';

export interface IngestMeasurement {
  ms: number;
  files: number;
  chunks: number;
  rejected: { source: string; code: string; message: string }[];
  /** Wall time per pipeline stage (ms), from the progress events; `collecting` is before the first event. */
  stages: Record<string, number>;
}

/** A fresh data directory with one draft listing on the offline model. */
export class ScratchStudio {
  readonly services: StudioServices;
  private readonly dir: string;

  constructor(cache: CacheMode = 'shared') {
    this.dir = mkdtempSync(join(tmpdir(), 'kbs-bench-data-'));
    const cold = cache === 'cold' ? (model: string) => coldEmbedder(this.services, model) : undefined;
    this.services = openServices(this.dir, cold ? { embedderFor: cold } : {});
  }

  newListing(title = 'Benchmark'): string {
    const wallet = this.services.wallets.defaultWallet().address;
    return this.services.listings.create({ title, accessModel: 'one_time', price: 0 }, wallet).id;
  }

  /** Texts the embedder computed (cache misses): one cache row per distinct chunk text. */
  embeddedTexts(): number {
    return (this.services.db.prepare('SELECT count(*) AS n FROM embedding_cache').get() as { n: number }).n;
  }

  close(): void {
    this.services.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function coldEmbedder(services: StudioServices, model: string) {
  if (model !== OFFLINE_MODEL.id) return services.embedderFor(model);
  const cache = new SqliteEmbeddingCache(services.db);
  const missing: EmbeddingCache = {
    get: () => undefined,
    set: (hash, m, vector) => cache.set(hash, m, vector),
    setMany: (m, entries) => cache.setMany(m, entries),
  };
  return cachedEmbedder(offlineGloveEmbedder(), missing, { batchSize: 512 });
}

/** Ingests the inputs into a new listing of the studio (non-atomic, studio limits) and times it. */
export async function measureIngestion(
  studio: ScratchStudio,
  inputs: { path: string; name?: string }[],
): Promise<IngestMeasurement> {
  const listingId = studio.newListing();
  const stages: Record<string, number> = {};
  const started = performance.now();
  let stage = 'collecting';
  let since = started;
  const onProgress = (p: IngestProgress) => {
    const now = performance.now();
    stages[stage] = (stages[stage] ?? 0) + now - since;
    stage = p.stage;
    since = now;
  };
  const result: IngestResult = await studio.services.ingestion.run({
    listingId,
    inputs,
    atomic: false,
    limits: STUDIO_LIMITS,
    onProgress,
  });
  const ms = performance.now() - started;
  const ingested = result.documents.filter((d) => d.status === 'ingested');
  return {
    ms,
    files: ingested.length,
    chunks: result.chunkCount,
    rejected: result.documents
      .filter((d) => d.status === 'rejected')
      .map((d) => ({ source: d.source, code: d.error?.code ?? '', message: d.error?.message ?? '' })),
    stages: Object.fromEntries(Object.entries(stages).map(([k, v]) => [k, Math.round(v)])),
  };
}
