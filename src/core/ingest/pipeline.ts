import { createHash, type Hash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DomainError } from '../errors';
import { sha256Hex } from '../embed/cachedEmbedder';
import type { Embedder } from '../embed/embedder';
import { OFFLINE_MODEL } from '../embed/offlineGlove';
import {
  chunkSectionsPausing,
  resolveChunkingOptions,
  type ChunkingOptions,
  type TextChunk,
} from './chunkers';
import { countTokensOffThread } from './chunkers/tokenCounter';
import { CommitStart, WritesInFlight } from './commitOverlap';
import { EmbeddingBudget, EmbeddingsAhead } from './embeddingsAhead';
import { EventLoopTurns } from './eventLoopTurns';
import { readEmbeddingsJsonl, type EmbeddingRecord } from './embeddingsJsonl';
import {
  ChunkLimitExceeded,
  IngestionFailed,
  InvalidDocument,
  KnowledgeBaseTooLarge,
  nothingToRetrieve,
  unreadableFile,
} from './errors';
import { capHeapGrowth } from './leanHeap';
import type { IngestLimits } from './limits';
import { refuseBeyondLimits } from './limitsAhead';
import { parseDocument } from './parse';
import { collectSources, hashFile, type IngestInput, type SourceFile } from './sources';
import type { SourceStore } from './sourceStore';
import type {
  CommitOptions,
  CommitSession,
  ExistingDocument,
  KnowledgeBaseStore,
  StagedDocumentWriter,
  Staging,
} from './store';
import type { FileOutcome, IngestProgress, IngestStage, UnpackingProgress } from '../../shared/uploads';
import type { DocumentFormat, ParsedDocument } from './types';

export type { FileOutcome, IngestProgress, IngestStage, UnpackingProgress };

export interface IngestRequest {
  /**
   * The listing and the model its chunks are embedded with; `setsModel`: a model the caller asked for (an
   * upload's `embedding_model`), which an empty listing of another model takes at the commit.
   */
  listing: { id: string; embeddingModel: string; dimensions: number; setsModel?: boolean };
  inputs: IngestInput[];
  chunking?: ChunkingOptions;
  csvRequiredColumns?: string[];
  /** All or nothing: one rejected file fails the whole ingestion (uploads). Otherwise the rest is kept (CLI). */
  atomic: boolean;
  limits: IngestLimits;
  /** Scratch space on the data directory's disk (extracted archives, the staging database). */
  workDir: string;
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
  /**
   * The ZIP archive being extracted, before any file is read (collectSources). Apart from onProgress,
   * whose first event gives the CLI's bar its total.
   */
  onUnpacking?: (progress: UnpackingProgress) => void;
  /** The bulk upload this ingestion is for (see IngestUpload). */
  upload?: IngestUpload;
}

/**
 * A bulk upload being ingested: the commit marks it completed in its own transaction (CompletedUpload),
 * and `inputsRead` (which gives the received files back) is awaited just before, once nothing reads them.
 */
export interface IngestUpload {
  id: string;
  now: () => Date;
  inputsRead: () => Promise<void>;
}

export interface IngestResult {
  listingId: string;
  documents: FileOutcome[];
  /** Whether anything was written to the knowledge base. */
  committed: boolean;
  documentCount: number;
  chunkCount: number;
  durationMs: number;
  /** How long the commit held the database's write lock, ms (CommitResult.writeLockMs), when it says. */
  writeLockMs?: number;
}

export interface IngestDeps {
  store: KnowledgeBaseStore;
  /** The embedder of a model; throws embedding_provider_unavailable when it cannot be used. */
  embedderFor(model: string): Embedder;
  /** Keeps each ingested file's bytes (for re-ingestion and push); without it nothing is kept. */
  sources?: SourceStore;
}

export const EMBED_BATCH = 256;
/**
 * Batches of chunks handed to the embedder before the ingesting thread takes them (EmbeddingsAhead):
 * they are embedded (on the offline model's embedding thread, or by a hosted model's API) while it stages
 * the files before. At most this many files, and bytes of them, are chunked ahead of their turn.
 */
const EMBED_AHEAD = 8;
const FINISH_AHEAD_FILES = 8;
const FINISH_AHEAD_BYTES = 8 * 1024 * 1024;
/**
 * Files parsed on worker threads are read and started ahead of their turn, so the workers parse while
 * this thread chunks, embeds and stages earlier files: up to this many bytes of source...
 */
const AHEAD_MAX_BYTES = 8 * 1024 * 1024;
/** ...and this many files (small Markdown and HTML files are many)... */
const AHEAD_MAX_FILES = 256;
/**
 * ...of which this many bytes of PDF and DOCX: their parses cannot be stopped once started, so after a
 * cancel at most these finish in the background (no more than the two files of up to 4 MB read ahead
 * before). A larger file, like one over AHEAD_MAX_BYTES, waits its turn.
 */
const AHEAD_MAX_UNSTOPPABLE_BYTES = 4 * 1024 * 1024;
const WORKER_FORMATS = new Set<SourceFile['format']>(['pdf', 'docx', 'html', 'markdown', 'csv']);
const UNSTOPPABLE_FORMATS = new Set<SourceFile['format']>(['pdf', 'docx']);
const PREBUILT_BATCH = 2_000;
/**
 * Batches of pre-built lines read, counted or sent ahead of the oldest one the writer has not taken yet
 * (7 MB or so each). With token counting as slow as it was, more kept the commit worker busy (a 500,000-line
 * import: 63.6 s with 3, 57.5 s with 10); since counting got faster, 2 import as fast as 8 (47.2 and 49.5 s
 * against 48.2 and 48.3 s), and the 1 GB upload benchmark's server peaks at 988-996 MB instead of
 * 1,144-1,159 MB (each batch lives in this thread's heap, the counters' and the commit worker's).
 */
const PREBUILT_IN_FLIGHT = 2;
/**
 * Chunk texts and vectors handed to a commit under way before the ingestion waits for it to take them.
 * The commit copies the staged chunks first; with 16 MB the last documents of the 100 MB mixed corpus
 * waited for that copy and the overlap gained nothing (31.8 and 33.0 s against 31.5 and 34.6 s), with
 * 64 MB 29.3 and 30.9 s (docs/performance.md, thirteenth pass).
 */
const COMMIT_IN_FLIGHT_BYTES = 64 * 1024 * 1024;
/**
 * Files up to this size are read synchronously. An asynchronous read takes several event-loop turns
 * (open, stat, read, close), each waiting behind this thread's chunking and embedding of earlier files:
 * 725 files of a 10 MB mixed corpus waited 2.4 s in all for reads that take about 50 µs each when made at
 * once. A read of 1 MB from the page cache holds the thread well under a millisecond.
 */
const SYNC_READ_MAX_BYTES = 1024 * 1024;

/**
 * parse → chunk → embed → stage, file by file, then one commit. Nothing reaches the knowledge base
 * before the commit, so a failure at any point leaves it exactly as it was.
 */
export async function ingest(request: IngestRequest, deps: IngestDeps): Promise<IngestResult> {
  const started = performance.now();
  const { listing, limits } = request;
  const collected = await collectSources(request.inputs, request.workDir, limits, {
    signal: request.signal,
    onUnpacking: request.onUnpacking,
  });
  const { rejected } = collected;
  // Pre-built embeddings go last: from the first of them on, their lines are written straight into the
  // commit's transaction (below), which holds the knowledge base's write lock; no parse or embedding
  // waits while it is held.
  const files = [
    ...collected.files.filter((f) => f.format !== 'jsonl'),
    ...collected.files.filter((f) => f.format === 'jsonl'),
  ];
  // A file refused because another took its name, by its outcome: that name (sortOutcomes).
  const clashNames = new Map<FileOutcome, string>();
  const outcomes: FileOutcome[] = rejected.map((r) => {
    const outcome = rejectedOutcome(r.source, r.format, r.error);
    if (r.clashesWith !== undefined) clashNames.set(outcome, r.clashesWith);
    return outcome;
  });
  // By the composed spelling new sources have (collectSources): a document stored under a decomposed
  // name before names were composed is the one a new version replaces.
  const existing = new Map(deps.store.documents(listing.id).map((d) => [d.source.normalize('NFC'), d]));
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
  // Source bytes the knowledge base would hold with the files staged so far (the commit checks again).
  let keptBytes = [...existing.values()].reduce((n, d) => n + d.bytes, 0);
  // Before any file is read, parsed or embedded: what the limits refuse whatever the files hold.
  refuseBeyondLimits(files, existing, limits);

  const staging = deps.store.createStaging(request.workDir);
  const commitOptions: CommitOptions = {
    model: listing.embeddingModel,
    dimensions: listing.dimensions,
    listingModel: listing.setsModel ? 'take' : 'same',
    maxChunks: limits.maxChunks,
    maxKnowledgeBaseBytes: limits.maxKnowledgeBaseBytes,
  };
  /**
   * The commit, begun while the last documents are still to be read (commitOverlap.ts) or at the first
   * pre-built embeddings file to ingest: the worker writes the staged documents, then each batch of
   * chunks or lines while this thread reads the next ones (a 500,000-line import used to stage for 30 s,
   * then commit for 54 s). Documents are streamed from then on.
   */
  let session: CommitSession | undefined;
  // Only for the offline model: a hosted model's documents take the network's time, which the pace
  // measured so far does not foretell (rate limits, retries), and the commit would hold the write lock
  // meanwhile (the server's writes wait for it).
  const commitStart = listing.embeddingModel === OFFLINE_MODEL.id ? new CommitStart(files) : undefined;
  const inFlight = new WritesInFlight(COMMIT_IN_FLIGHT_BYTES);
  // Checked after each file and each batch of chunks embedded.
  const turns = new EventLoopTurns();
  const chunksStaged = () => staging.chunkCount + (session?.chunkCount ?? 0);
  // Stops the parses under way (the current file's and those ahead) on cancel, failure or return.
  const parsing = new AbortController();
  // Every queued parse of the files ahead listens to it (and stops listening when it ends): not a leak.
  setMaxListeners(0, parsing.signal);
  const cancel = () => parsing.abort(request.signal?.reason);
  request.signal?.addEventListener('abort', cancel, { once: true });
  // Originals are copied into the source store while the next files are worked on (a copy per file,
  // awaited one by one, left this thread idle about a millisecond each). A disposable file (a received
  // upload, an extracted entry) has been read whole by then and is moved instead.
  const keeping: Promise<void>[] = [];
  // The last file's staging and bookkeeping (finishFile below): each file's begins once the one before
  // has ended. The files chunked and waiting for theirs, with their sizes, are `finishing`.
  let last: Promise<void> = Promise.resolve();
  let stopping = false;
  const finishing: { done: Promise<void>; bytes: number }[] = [];
  let finishingBytes = 0;
  const budget = new EmbeddingBudget(EMBED_AHEAD);
  // Each copy is held from prunes (a document deleted meanwhile) until no longer needed: below, once
  // the ingestion has committed or failed.
  const holds: (() => void)[] = [];
  const { sources } = deps;
  const keepSource = (hash: string, file: SourceFile) => {
    if (!sources) return;
    holds.push(sources.hold(hash));
    const copy = sources.put(hash, file.path, { move: file.disposable });
    // Awaited before the commit; a failure then fails the ingestion, and is never unhandled before.
    copy.catch(() => undefined);
    keeping.push(copy);
  };
  // Lifted in the finally below.
  const releaseHeapCap = files.some((f) => f.format === 'jsonl') ? capHeapGrowth() : undefined;
  try {
    const ahead = new Map<SourceFile, Promise<PreparedFile>>();
    let aheadBytes = 0;
    let aheadUnstoppableBytes = 0;
    let scanned = 0;
    const prepareFile = (file: SourceFile, startParsing: boolean) =>
      prepare(
        file,
        existing.get(file.source),
        file.format === 'jsonl' ? {} : chunking,
        request,
        parsing.signal,
        startParsing,
      );
    // The next files that parse on a worker thread start now, in order, within the bounds above.
    const startAhead = () => {
      for (; scanned < files.length && ahead.size < AHEAD_MAX_FILES; scanned++) {
        const next = files[scanned]!;
        if (!WORKER_FORMATS.has(next.format) || next.bytes > AHEAD_MAX_BYTES) continue;
        const unstoppable = UNSTOPPABLE_FORMATS.has(next.format);
        if (unstoppable && next.bytes > AHEAD_MAX_UNSTOPPABLE_BYTES) continue;
        if (aheadBytes + next.bytes > AHEAD_MAX_BYTES) return;
        if (unstoppable && aheadUnstoppableBytes + next.bytes > AHEAD_MAX_UNSTOPPABLE_BYTES) return;
        const early = prepareFile(next, true);
        early.catch(() => undefined);
        ahead.set(next, early);
        aheadBytes += next.bytes;
        if (unstoppable) aheadUnstoppableBytes += next.bytes;
      }
    };
    /**
     * A file's staging and what follows it (its outcome, the limits, progress), in file order: each file's
     * begins once the one before has ended. Parsed formats are chunked, and their embeddings started
     * (EmbeddingsAhead), before the file before is staged: the offline model's embedding thread embeds
     * them meanwhile.
     */
    const finishFile = async (
      file: SourceFile,
      index: number,
      prepared: PreparedFile,
      chunked: ChunkedFile | DomainError | undefined,
    ) => {
      // The ingestion failed while this file waited its turn: nothing of it will be kept.
      if (stopping) return;
      const previous = existing.get(file.source);
      const fileChunking = file.format === 'jsonl' ? {} : chunking;
      if (prepared.unchanged && previous) {
        // Knowledge bases from before sources were kept get their copy on the next ingestion.
        keepSource(prepared.contentHash!, file);
        outcomes.push({
          source: file.source,
          format: file.format,
          status: 'unchanged',
          chunks: previous.chunkCount,
          ...documentsOf(file.format, previous.documentCount),
        });
      } else {
        // A file that would take the knowledge base past the studio's byte limit is refused before it is
        // staged: a 1.4 GB import used to be staged for minutes, then refused by the commit.
        const wouldKeep = keptBytes - (previous?.bytes ?? 0) + file.bytes;
        if (limits.maxKnowledgeBaseBytes !== null && wouldKeep > limits.maxKnowledgeBaseBytes)
          throw new KnowledgeBaseTooLarge(wouldKeep, limits.maxKnowledgeBaseBytes);
        try {
          if (chunked instanceof DomainError) throw chunked;
          if (file.format === 'jsonl' || commitStart?.before(index, chunksStaged()))
            session ??= deps.store.beginCommit(listing.id, staging, commitOptions);
          const { contentHash, ...staged } = await stageFile(
            file,
            prepared,
            chunked,
            fileChunking,
            request,
            session ?? staging,
            report,
            inFlight,
            turns,
          );
          keepSource(contentHash, file);
          outcomes.push({ source: file.source, format: file.format, status: 'ingested', ...staged });
          keptBytes = wouldKeep;
          replacedChunks += previous?.chunkCount ?? 0;
          const total = existingChunks - replacedChunks + chunksStaged();
          if (total > limits.maxChunks) throw new ChunkLimitExceeded(limits.maxChunks, total);
        } catch (err) {
          if (!(err instanceof DomainError) || err instanceof ChunkLimitExceeded) throw err;
          outcomes.push(rejectedOutcome(file.source, file.format, err));
        }
      }
      progress.filesDone++;
      progress.bytesDone += file.bytes;
      progress.chunks = chunksStaged();
    };
    for (const [index, file] of files.entries()) {
      request.signal?.throwIfAborted();
      report('reading', file.source);
      const early = ahead.get(file);
      if (early) {
        ahead.delete(file);
        aheadBytes -= file.bytes;
        if (UNSTOPPABLE_FORMATS.has(file.format)) aheadUnstoppableBytes -= file.bytes;
      }
      scanned = Math.max(scanned, index + 1);
      // The current file first: its read and worker parse are queued before those of the files started
      // ahead (a format parsed on this thread is parsed when staged, so its time counts as parsing).
      const current = early ?? prepareFile(file, WORKER_FORMATS.has(file.format));
      startAhead();
      const prepared = await current;
      // Room for this file's turn: the files chunked ahead of theirs are bounded.
      while (
        finishing.length >= FINISH_AHEAD_FILES ||
        (finishing.length > 0 && finishingBytes + file.bytes > FINISH_AHEAD_BYTES)
      ) {
        const oldest = finishing.shift()!;
        finishingBytes -= oldest.bytes;
        await oldest.done;
      }
      let chunked: ChunkedFile | DomainError | undefined;
      if (file.format !== 'jsonl' && !(prepared.unchanged && existing.has(file.source))) {
        chunked = await chunkFile(
          { ...file, format: file.format },
          prepared,
          request,
          deps,
          report,
          parsing.signal,
          budget,
          turns,
        ).catch((err: unknown) => {
          // Reported in the file's turn (finishFile); anything else stops the ingestion.
          if (err instanceof DomainError) return err;
          throw err;
        });
      }
      // This file's turn comes once the file before has finished (a failure of one fails those after it).
      last = last.then(() => finishFile(file, index, prepared, chunked));
      // Awaited in turn above, or below; a failure meanwhile must not count as unhandled.
      last.catch(() => undefined);
      finishing.push({ done: last, bytes: file.bytes });
      finishingBytes += file.bytes;
      // Pre-built embeddings are streamed into the commit: nothing to do ahead of them.
      if (file.format === 'jsonl') await last;
      await turns.take();
    }
    await last;

    // Every batch is in the commit's transaction, and every kept copy in place, before it is committed.
    await inFlight.drain();
    await Promise.all(keeping);
    // A cancel during the last file stops here, before anything is committed.
    request.signal?.throwIfAborted();
    const firstRejected = outcomes.find((o) => o.status === 'rejected');
    if (request.atomic && firstRejected)
      throw new IngestionFailed(sortOutcomes(outcomes, clashNames), firstRejected);
    // Whoever sees the upload completed finds its received files gone (and a full disk its room back).
    await request.upload?.inputsRead();

    // Documents, not files: each item of a JSON file is one (spec §2).
    let documentCount = [...existing.values()].reduce((n, d) => n + d.documentCount, 0);
    let chunkCount = existingChunks;
    let writeLockMs: number | undefined;
    const committed = staging.documentCount + (session?.documentCount ?? 0) > 0;
    if (committed) {
      report('storing');
      session ??= deps.store.beginCommit(listing.id, staging, commitOptions);
      const { upload } = request;
      const result = await session.finish(
        upload && {
          uploadId: upload.id,
          files: sortOutcomes(outcomes, clashNames),
          progress: { ...progress, stage: 'done' },
          updatedAt: upload.now().toISOString(),
        },
      );
      documentCount = result.documentCount;
      chunkCount = result.chunkCount;
      writeLockMs = result.writeLockMs;
    }
    progress.chunks = chunkCount;
    report('done');
    return {
      listingId: listing.id,
      documents: sortOutcomes(outcomes, clashNames),
      committed,
      documentCount,
      chunkCount,
      durationMs: Math.round(performance.now() - started),
      ...(writeLockMs !== undefined ? { writeLockMs } : {}),
    };
  } finally {
    releaseHeapCap?.();
    request.signal?.removeEventListener('abort', cancel);
    parsing.abort();
    // Nothing may reach the staging or the commit once they are disposed of; the files still waiting
    // for their turn are not staged.
    stopping = true;
    await last.catch(() => undefined);
    // Rolls back a commit that was not finished (cancel, failure, nothing kept); its worker is done with
    // the staging file once this resolves.
    await session?.abort();
    staging.dispose();
    // On failure too, no copy is still reading the inputs once the ingestion has returned: the caller
    // removes them next.
    await Promise.allSettled(keeping);
    // Committed copies are now referenced by their documents; those of a failure are pruned later.
    for (const release of holds) release();
  }
}

async function stageFile(
  file: SourceFile,
  prepared: PreparedFile,
  chunked: ChunkedFile | undefined,
  chunking: Record<string, unknown>,
  request: IngestRequest,
  staging: Staging | CommitSession,
  report: (stage: IngestStage, file?: string) => void,
  inFlight: WritesInFlight,
  turns: EventLoopTurns,
): Promise<Pick<FileOutcome, 'chunks' | 'documents' | 'skippedRows' | 'warnings'> & { contentHash: string }> {
  // A JSONL file not hashed yet (it cannot be unchanged) is hashed as its lines are read.
  const hashing = prepared.contentHash === undefined ? createHash('sha256') : undefined;
  const document = {
    source: file.source,
    format: file.format,
    // Given to the writer with finish() when the file is hashed while read.
    contentHash: prepared.contentHash ?? '',
    bytes: file.bytes,
    metadata: { chunking },
  };
  const writer = staging.open(document);
  try {
    // A document comes chunked (chunkFile); pre-built embeddings are read here.
    const outcome = chunked
      ? await stageChunks(file.source, chunked, request, writer, report, inFlight, turns)
      : await stagePrebuilt(file, request.listing.embeddingModel, writer, request.signal, hashing);
    const extra: Record<string, unknown> = {};
    if (outcome.skippedRows) extra.skippedRows = outcome.skippedRows;
    if (outcome.warnings) extra.warnings = outcome.warnings;
    const contentHash = prepared.contentHash ?? hashing!.digest('hex');
    writer.finish({ ...document.metadata, ...extra }, hashing ? contentHash : undefined);
    return { ...outcome, contentHash };
  } catch (err) {
    writer.discard();
    throw err;
  }
}

/** A document parsed and chunked, its first embeddings under way. */
interface ChunkedFile {
  parsed: ParsedDocument;
  pieces: TextChunk[];
  embeddings: EmbeddingsAhead;
}

/**
 * Awaits a document's parse, chunks it and starts its embeddings: what can be done before the files
 * before it are staged.
 */
async function chunkFile(
  file: SourceFile & { format: DocumentFormat },
  prepared: PreparedFile,
  request: IngestRequest,
  deps: IngestDeps,
  report: (stage: IngestStage, file?: string) => void,
  signal: AbortSignal,
  budget: EmbeddingBudget,
  turns: EventLoopTurns,
): Promise<ChunkedFile> {
  const { source } = file;
  report('parsing', source);
  const parsed = await (prepared.parsed ?? parse(file, prepared.bytes!, request, signal));
  report('chunking', source);
  // In turns with the server's requests: a large CSV or JSON file's thousands of sections held the
  // thread for 100-220 ms in one go.
  const pieces = await chunkSectionsPausing(parsed.sections, request.chunking, () => turns.take());
  if (pieces.length === 0) throw nothingToRetrieve(source, parsed.skippedRows);
  const embedder = deps.embedderFor(request.listing.embeddingModel);
  const texts = pieces.map((c) => c.text);
  return { parsed, pieces, embeddings: new EmbeddingsAhead(embedder, texts, EMBED_BATCH, budget) };
}

/**
 * A file's `documents` in its outcome: each item of a JSON file is one document (spec §2; the commit
 * names them, commitWorker.mjs), said when they are not one, as any other file is.
 */
const documentsOf = (format: string, items: number): Pick<FileOutcome, 'documents'> =>
  format === 'json' && items !== 1 ? { documents: items } : {};

/** Writes a chunked document's chunks with their vectors, a batch at a time as they are embedded. */
async function stageChunks(
  source: string,
  { parsed, pieces, embeddings }: ChunkedFile,
  request: IngestRequest,
  writer: StagedDocumentWriter,
  report: (stage: IngestStage, file?: string) => void,
  inFlight: WritesInFlight,
  turns: EventLoopTurns,
): Promise<Pick<FileOutcome, 'chunks' | 'documents' | 'skippedRows' | 'warnings'>> {
  report('embedding', source);
  try {
    for (let b = 0; b < embeddings.batchCount; b++) {
      request.signal?.throwIfAborted();
      const batch = pieces.slice(b * EMBED_BATCH, (b + 1) * EMBED_BATCH);
      const vectors = await embeddings.next();
      const taken = writer.add(
        batch.map((c, j) => ({
          text: c.text,
          tokenCount: c.tokenCount,
          contentHash: sha256Hex(c.text),
          metadata: { ...parsed.metadata, ...c.metadata },
          vector: vectors[j]!,
        })),
      );
      // A commit under way takes the batch on its thread: go on meanwhile, within COMMIT_IN_FLIGHT_BYTES.
      if (taken) {
        const bytes = batch.reduce((n, c, j) => n + 2 * c.text.length + vectors[j]!.byteLength, 0);
        await inFlight.add(taken, bytes);
      }
      await turns.take();
    }
  } finally {
    embeddings.close();
  }
  return {
    chunks: pieces.length,
    ...documentsOf(parsed.format, new Set(pieces.map((c) => c.metadata.item)).size),
    ...(parsed.skippedRows?.length ? { skippedRows: parsed.skippedRows } : {}),
    ...(parsed.warnings?.length ? { warnings: parsed.warnings } : {}),
  };
}

/**
 * Pre-built embeddings: streamed line by line to the writer (the commit under way, see ingest()), a
 * batch at a time. Counting the tokens of a batch runs on worker threads while the next batch is read
 * and earlier ones are written; at most PREBUILT_IN_FLIGHT batches are in flight, so memory stays bounded.
 */
async function stagePrebuilt(
  file: SourceFile,
  model: string,
  writer: StagedDocumentWriter,
  signal: AbortSignal | undefined,
  hashing: Hash | undefined,
): Promise<Pick<FileOutcome, 'chunks' | 'skippedRows' | 'warnings'>> {
  /**
   * Each write is sent to the writer once its tokens are counted and the write before it was sent; it
   * resolves to the writer's promise of having taken the batch (a commit under way takes it on its
   * worker), so the next batches are sent while the writer is still busy with this one.
   */
  const writes: Promise<{ taken: void | Promise<void> }>[] = [];
  let count = 0;
  const stage = (records: EmbeddingRecord[]) => {
    const counted = countTokensOffThread(records.map((r) => r.text));
    const previous = writes.at(-1) ?? Promise.resolve();
    const write = previous.then(async () => {
      const tokenCounts = await counted;
      const taken = writer.add(
        records.map((r, i) => ({
          text: r.text,
          tokenCount: tokenCounts[i]!,
          contentHash: sha256Hex(r.text),
          metadata: { ...r.metadata, line: r.line },
          vector: r.embedding,
        })),
      );
      count += records.length;
      return { taken };
    });
    // Awaited in order below; this keeps a failure from being reported as unhandled meanwhile.
    write.catch(() => undefined);
    writes.push(write);
  };
  /** Waits for the oldest write to be sent and taken. */
  const settleOldest = async () => {
    const { taken } = await writes.shift()!;
    await taken;
  };
  let batch: EmbeddingRecord[] = [];
  try {
    const onBytes = hashing && ((bytes: Buffer) => void hashing.update(bytes));
    for await (const line of readEmbeddingsJsonl(file.path, model, file.source, onBytes)) {
      batch.push(line);
      if (batch.length === PREBUILT_BATCH) {
        // A cancel stops a long file between batches (its commit is rolled back).
        signal?.throwIfAborted();
        stage(batch);
        batch = [];
        if (writes.length >= PREBUILT_IN_FLIGHT) await settleOldest();
      }
    }
    if (batch.length > 0) stage(batch);
    while (writes.length > 0) await settleOldest();
  } catch (err) {
    // Nothing may reach the writer after the caller discards it.
    await Promise.allSettled(writes.map(async (write) => (await write).taken));
    throw err;
  }
  if (count === 0) throw new InvalidDocument(file.source, 'the file has no embedding lines.');
  return { chunks: count };
}

interface PreparedFile {
  /** The SHA-256 of the file's bytes; for a changed JSONL file, computed while its lines are read. */
  contentHash?: string;
  /** Same bytes and chunking settings as the stored document: nothing to do. */
  unchanged: boolean;
  /** The bytes of a changed document (not JSONL, which is streamed). */
  bytes?: Uint8Array;
  /** The parse already under way, for files started ahead of their turn. */
  parsed?: Promise<ParsedDocument>;
}

/**
 * Hashes a file and, when it changed and `startParsing`, starts parsing it. A document is read once for
 * both (the parsers hold it whole anyway, within the per-file limit); JSONL is hashed as a stream.
 */
async function prepare(
  file: SourceFile,
  previous: ExistingDocument | undefined,
  chunking: Record<string, unknown>,
  request: IngestRequest,
  signal: AbortSignal,
  startParsing: boolean,
): Promise<PreparedFile> {
  if (file.format === 'jsonl') {
    // Only a file of the stored document's size can be unchanged; any other is hashed as it is read,
    // not in a pass of its own first (1.5 s for 1.4 GB, with the commit waiting for the first lines).
    if (previous?.bytes !== file.bytes) return { unchanged: false };
    // A file that cannot be read is refused when its lines are read (readEmbeddingsJsonl), in its turn.
    const contentHash = await hashFile(file.path).catch(() => undefined);
    if (contentHash === undefined) return { unchanged: false };
    return { contentHash, unchanged: isUnchanged(previous, contentHash, chunking) };
  }
  let read: Buffer;
  try {
    read = file.bytes <= SYNC_READ_MAX_BYTES ? readFileSync(file.path) : await readFile(file.path);
  } catch (err) {
    // A file that cannot be read (EACCES, gone since it was listed) is refused in its turn, as a parse
    // failure is (chunkFile awaits `parsed`): the other files are still ingested.
    const parsed = Promise.reject(unreadableFile(file.source, err));
    parsed.catch(() => undefined);
    return { unchanged: false, parsed };
  }
  const bytes = new Uint8Array(read);
  const contentHash = createHash('sha256').update(bytes).digest('hex');
  if (isUnchanged(previous, contentHash, chunking)) return { contentHash, unchanged: true };
  if (!startParsing) return { contentHash, unchanged: false, bytes };
  const parsed = parse({ ...file, format: file.format }, bytes, request, signal);
  // Awaited by stageParsed; until then a refusal must not count as unhandled.
  parsed.catch(() => undefined);
  return { contentHash, unchanged: false, parsed };
}

function parse(
  file: SourceFile & { format: DocumentFormat },
  bytes: Uint8Array,
  request: IngestRequest,
  signal: AbortSignal,
): Promise<ParsedDocument> {
  return parseDocument(
    file.format,
    { bytes, source: file.source },
    { csvRequiredColumns: request.csvRequiredColumns, signal },
  );
}

/**
 * The chunking a document is recorded with (for "unchanged", re-ingestion and push): the one the
 * chunkers use. It wrote an overlap of 64 when none was given, where the chunkers take an eighth of a
 * smaller size (`--chunk-size 256`: 32 used, 64 recorded and pushed).
 */
function normalizeChunking(request: IngestRequest): Record<string, unknown> {
  const c = resolveChunkingOptions(request.chunking);
  return {
    strategy: c.strategy,
    chunkSize: c.chunkSize,
    chunkOverlap: c.chunkOverlap,
    ...(request.csvRequiredColumns ? { csvRequiredColumns: request.csvRequiredColumns } : {}),
  };
}

function isUnchanged(
  previous: ExistingDocument | undefined,
  contentHash: string,
  chunking: Record<string, unknown>,
): boolean {
  return (
    previous !== undefined &&
    previous.contentHash === contentHash &&
    JSON.stringify(previous.metadata.chunking ?? {}) === JSON.stringify(chunking)
  );
}

function rejectedOutcome(source: string, format: string, err: DomainError): FileOutcome {
  return { source, format, status: 'rejected', chunks: 0, error: { code: err.code, message: err.message } };
}

/**
 * By source; a refused name clash (in `clashNames`, with the name another file took: RejectedSource.
 * clashesWith) right after the row of the file that took the name.
 */
const sortOutcomes = (o: FileOutcome[], clashNames: ReadonlyMap<FileOutcome, string>) => {
  const key = (x: FileOutcome) => clashNames.get(x) ?? x.source;
  return [...o].sort(
    (a, b) => key(a).localeCompare(key(b)) || Number(clashNames.has(a)) - Number(clashNames.has(b)),
  );
};
