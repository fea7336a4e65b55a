import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Embedder } from '../embed/embedder';
import { dimensionsOf } from '../embed/models';
import { Conflict, Forbidden } from '../errors';
import { newId } from '../ids';
import type { ListingService, Viewer } from '../marketplace/listings';
import type { ChunkingOptions } from './chunkers';
import type { IngestLimits } from './limits';
import type { IngestProgress, IngestResult, IngestUpload, UnpackingProgress } from './pipeline';
import type { IngestInput } from './sources';
import type { SourceStore } from './sourceStore';
import type { KnowledgeBaseStore } from './store';

export interface IngestCommand {
  listingId: string;
  inputs: IngestInput[];
  chunking?: ChunkingOptions;
  csvRequiredColumns?: string[];
  atomic: boolean;
  limits: IngestLimits;
  /** Who asks: the studio itself, or an API caller who must be the listing's creator. */
  viewer?: Viewer;
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
  /** The ZIP archive being extracted, before any file is read (see IngestRequest). */
  onUnpacking?: (progress: UnpackingProgress) => void;
  /** The bulk upload this is for: its commit marks it completed (see IngestUpload). */
  upload?: IngestUpload;
  /**
   * The model to embed with, when the caller chose one (an upload's `embedding_model`); else the
   * listing's. A listing without chunks takes it when this ingestion commits, not before: a failed or
   * refused ingestion leaves the listing as it was.
   */
  embeddingModel?: string;
}

/** Runs ingestions for listings, each in its own scratch folder under the data directory. */
export class IngestionService {
  constructor(
    private readonly listings: ListingService,
    private readonly store: KnowledgeBaseStore,
    private readonly embedderFor: (model: string) => Embedder,
    private readonly scratchDir: string,
    readonly sources?: SourceStore,
  ) {}

  async run(command: IngestCommand): Promise<IngestResult> {
    const viewer = command.viewer ?? 'studio';
    const listing = this.listings.get(command.listingId, viewer);
    if (viewer !== 'studio' && listing.creatorWallet !== viewer.wallet) {
      throw new Forbidden(`Only the creator of listing '${listing.id}' may upload to it.`);
    }
    const model = command.embeddingModel ?? listing.embeddingModel;
    const dimensions = dimensionsOf(model);
    // Its caller checked it when the ingestion was asked for (an upload, queued since); checked again by
    // the commit, under the write lock, as another ingestion may store chunks meanwhile.
    if (model !== listing.embeddingModel && listing.chunkCount > 0) {
      throw new Conflict(
        `embedding_model: listing '${listing.id}' now holds chunks embedded with ${listing.embeddingModel}, stored after this ingestion was asked for with ${model}; nothing was stored. Ingest again with ${listing.embeddingModel}, or into a new listing.`,
      );
    }
    const workDir = join(this.scratchDir, newId('job', 12));
    await mkdir(workDir, { recursive: true });
    try {
      // The pipeline pulls in the tokenizer tables and archive code: load it when first needed.
      const { ingest } = await import('./pipeline');
      return await ingest(
        {
          listing: {
            ...listing,
            embeddingModel: model,
            dimensions,
            setsModel: command.embeddingModel !== undefined,
          },
          inputs: command.inputs,
          chunking: command.chunking,
          csvRequiredColumns: command.csvRequiredColumns,
          atomic: command.atomic,
          limits: command.limits,
          workDir,
          signal: command.signal,
          onProgress: command.onProgress,
          onUnpacking: command.onUnpacking,
          upload: command.upload,
        },
        { store: this.store, embedderFor: this.embedderFor, sources: this.sources },
      );
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  }
}
