import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DomainError } from '../errors';
import type { Embedder } from '../embed/embedder';
import { chunkSections, countTokens, type ChunkingOptions } from './chunkers';
import { readEmbeddingsJsonl } from './embeddingsJsonl';
import { ChunkLimitExceeded, IngestionFailed, InvalidDocument } from './errors';
import type { IngestLimits } from './limits';
import { parseDocument } from './parse';
import { collectSources, hashFile, type SourceFile } from './sources';
import type { SourceStore } from './sourceStore';
import type {
  ExistingDocument,
  KnowledgeBaseStore,
  StagedChunk,
  StagedDocumentWriter,
  Staging,
} from './store';
import type { FileOutcome, IngestProgress, IngestStage } from '../../shared/uploads';
import type { DocumentFormat } from './types';

export type { FileOutcome, IngestProgress, IngestStage };

export interface IngestRequest {
  listing: { id: string; embeddingModel: string; dimensions: number };
  inputs: { path: string; name?: string }[];
  chunking?: ChunkingOptions;
  csvRequiredColumns?: string[];
  /** All or nothing: one rejected file fails the whole ingestion (uploads). Otherwise the rest is kept (CLI). */
  atomic: boolean;
  limits: IngestLimits;
  /** Scratch space on the data directory's disk (extracted archives, the staging database). */
  workDir: string;
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
}

export interface IngestResult {
  listingId: string;
  documents: FileOutcome[];
  /** Whether anything was written to the knowledge base. */
  committed: boolean;
  documentCount: number;
  chunkCount: number;
  durationMs: number;
}

export interface IngestDeps {
  store: KnowledgeBaseStore;
  /** The embedder of a model; throws embedding_provider_unavailable when it cannot be used. */
  embedderFor(model: string): Embedder;
  /** Keeps each ingested file's bytes (for re-ingestion and push); without it nothing is kept. */
  sources?: SourceStore;
}

const EMBED_BATCH = 256;
const PREBUILT_BATCH = 2_000;

/**
 * parse → chunk → embed → stage, file by file, then one commit. Nothing reaches the knowledge base
 * before the commit, so a failure at any point leaves it exactly as it was.
 */
export async function ingest(request: IngestRequest, deps: IngestDeps): Promise<IngestResult> {
  const started = performance.now();
  const { listing, limits } = request;
  const { files, rejected } = await collectSources(request.inputs, request.workDir, limits);
  const outcomes: FileOutcome[] = rejected.map((r) => rejectedOutcome(r.source, r.format, r.error));
  const existing = new Map(deps.store.documents(listing.id).map((d) => [d.source, d]));
  const chunking = normalizeChunking(request);
  const progress: IngestProgress = {
    stage: 'reading',
    filesDone: 0,
    filesTotal: files.length,
    bytesDone: 0,
    bytesTotal: files.reduce((n, f) => n + f.bytes, 0),
    chunks: 0,
  };
  const report = (stage: IngestStage, file?: string) => request.onProgress?.({ ...progress, stage, file });
  const existingChunks = [...existing.values()].reduce((n, d) => n + d.chunkCount, 0);
  let replacedChunks = 0;

  const staging = deps.store.createStaging(request.workDir);
  try {
    for (const file of files) {
      request.signal?.throwIfAborted();
      report('reading', file.source);
      const contentHash = await hashFile(file.path);
      const previous = existing.get(file.source);
      const fileChunking = file.format === 'jsonl' ? {} : chunking;
      if (previous && isUnchanged(previous, contentHash, fileChunking)) {
        // Knowledge bases from before sources were kept get their copy on the next ingestion.
        await deps.sources?.put(contentHash, file.path);
        outcomes.push({
          source: file.source,
          format: file.format,
          status: 'unchanged',
          chunks: previous.chunkCount,
        });
      } else {
        try {
          const staged = await stageFile(file, contentHash, fileChunking, request, deps, staging, report);
          await deps.sources?.put(contentHash, file.path);
          outcomes.push({ source: file.source, format: file.format, status: 'ingested', ...staged });
          replacedChunks += previous?.chunkCount ?? 0;
          const total = existingChunks - replacedChunks + staging.chunkCount;
          if (total > limits.maxChunks) throw new ChunkLimitExceeded(limits.maxChunks, total);
        } catch (err) {
          if (!(err instanceof DomainError) || err instanceof ChunkLimitExceeded) throw err;
          outcomes.push(rejectedOutcome(file.source, file.format, err));
        }
      }
      progress.filesDone++;
      progress.bytesDone += file.bytes;
      progress.chunks = staging.chunkCount;
    }

    const firstRejected = outcomes.find((o) => o.status === 'rejected');
    if (request.atomic && firstRejected) throw new IngestionFailed(sortOutcomes(outcomes), firstRejected);

    let documentCount = existing.size;
    let chunkCount = existingChunks;
    const committed = staging.documentCount > 0;
    if (committed) {
      report('storing');
      const result = deps.store.commit(listing.id, staging, {
        model: listing.embeddingModel,
        dimensions: listing.dimensions,
        maxChunks: limits.maxChunks,
        maxKnowledgeBaseBytes: limits.maxKnowledgeBaseBytes,
      });
      documentCount = result.documentCount;
      chunkCount = result.chunkCount;
    }
    progress.chunks = chunkCount;
    report('done');
    return {
      listingId: listing.id,
      documents: sortOutcomes(outcomes),
      committed,
      documentCount,
      chunkCount,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    staging.dispose();
  }
}

async function stageFile(
  file: SourceFile,
  contentHash: string,
  chunking: Record<string, unknown>,
  request: IngestRequest,
  deps: IngestDeps,
  staging: Staging,
  report: (stage: IngestStage, file?: string) => void,
): Promise<Pick<FileOutcome, 'chunks' | 'skippedRows' | 'warnings'>> {
  const document = {
    source: file.source,
    format: file.format,
    contentHash,
    bytes: file.bytes,
    metadata: { chunking },
  };
  const writer = staging.open(document);
  try {
    const outcome =
      file.format === 'jsonl'
        ? await stagePrebuilt(file, request.listing.embeddingModel, writer)
        : await stageParsed({ ...file, format: file.format }, request, deps, writer, report);
    const extra: Record<string, unknown> = {};
    if (outcome.skippedRows) extra.skippedRows = outcome.skippedRows;
    if (outcome.warnings) extra.warnings = outcome.warnings;
    writer.finish({ ...document.metadata, ...extra });
    return outcome;
  } catch (err) {
    writer.discard();
    throw err;
  }
}

async function stageParsed(
  file: SourceFile & { format: DocumentFormat },
  request: IngestRequest,
  deps: IngestDeps,
  writer: StagedDocumentWriter,
  report: (stage: IngestStage, file?: string) => void,
): Promise<Pick<FileOutcome, 'chunks' | 'skippedRows' | 'warnings'>> {
  report('parsing', file.source);
  const bytes = new Uint8Array(await readFile(file.path));
  const parsed = await parseDocument(
    file.format,
    { bytes, source: file.source },
    { csvRequiredColumns: request.csvRequiredColumns },
  );
  report('chunking', file.source);
  const pieces = chunkSections(parsed.sections, request.chunking);
  if (pieces.length === 0) {
    throw new InvalidDocument(
      file.source,
      'no text was found in the document, so there is nothing to retrieve.',
    );
  }

  report('embedding', file.source);
  const embedder = deps.embedderFor(request.listing.embeddingModel);
  for (let i = 0; i < pieces.length; i += EMBED_BATCH) {
    request.signal?.throwIfAborted();
    const batch = pieces.slice(i, i + EMBED_BATCH);
    const vectors = await embedder.embed(
      batch.map((c) => c.text),
      'document',
    );
    writer.add(
      batch.map((c, j) => ({
        text: c.text,
        tokenCount: c.tokenCount,
        contentHash: sha256(c.text),
        metadata: { ...parsed.metadata, ...c.metadata },
        vector: vectors[j]!,
      })),
    );
  }
  return {
    chunks: pieces.length,
    ...(parsed.skippedRows?.length ? { skippedRows: parsed.skippedRows } : {}),
    ...(parsed.warnings?.length ? { warnings: parsed.warnings } : {}),
  };
}

/** Pre-built embeddings: streamed line by line into the staging area, a batch at a time. */
async function stagePrebuilt(
  file: SourceFile,
  model: string,
  writer: StagedDocumentWriter,
): Promise<Pick<FileOutcome, 'chunks' | 'skippedRows' | 'warnings'>> {
  let batch: StagedChunk[] = [];
  let count = 0;
  for await (const line of readEmbeddingsJsonl(file.path, model, file.source)) {
    batch.push({
      text: line.text,
      tokenCount: countTokens(line.text),
      contentHash: sha256(line.text),
      metadata: { ...line.metadata, line: line.line },
      vector: line.embedding,
    });
    if (batch.length === PREBUILT_BATCH) {
      writer.add(batch);
      count += batch.length;
      batch = [];
    }
  }
  writer.add(batch);
  count += batch.length;
  if (count === 0) throw new InvalidDocument(file.source, 'the file has no embedding lines.');
  return { chunks: count };
}

function normalizeChunking(request: IngestRequest): Record<string, unknown> {
  const c = request.chunking ?? {};
  return {
    strategy: c.strategy ?? 'recursive',
    chunkSize: c.chunkSize ?? 512,
    chunkOverlap: c.chunkOverlap ?? 64,
    ...(request.csvRequiredColumns ? { csvRequiredColumns: request.csvRequiredColumns } : {}),
  };
}

function isUnchanged(
  previous: ExistingDocument,
  contentHash: string,
  chunking: Record<string, unknown>,
): boolean {
  return (
    previous.contentHash === contentHash &&
    JSON.stringify(previous.metadata.chunking ?? {}) === JSON.stringify(chunking)
  );
}

function rejectedOutcome(source: string, format: string, err: DomainError): FileOutcome {
  return { source, format, status: 'rejected', chunks: 0, error: { code: err.code, message: err.message } };
}

const sortOutcomes = (o: FileOutcome[]) => [...o].sort((a, b) => a.source.localeCompare(b.source));
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
