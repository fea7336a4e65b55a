import { rm } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { resolve } from 'node:path';
import type { Listing } from '../../shared/listings';
import type { FileOutcome, Upload, UploadConfig, UploadFileResult } from '../../shared/uploads';
import { DomainError, Forbidden, InvalidInput } from '../errors';
import { newId } from '../ids';
import { IngestionFailed, InvalidDocument, UnsupportedEmbeddingModel } from '../ingest/errors';
import { BULK_LIMITS, type IngestLimits } from '../ingest/limits';
import type { IngestProgress } from '../ingest/pipeline';
import type { IngestionService } from '../ingest/service';
import { EMBEDDING_MODELS } from '../embed/models';
import type { ListingService } from '../marketplace/listings';
import { storageFailure } from './storageErrors';

export type UploadRecord = Upload & { wallet: string };

export interface UploadRepository {
  insert(record: UploadRecord): void;
  update(id: string, patch: Partial<Omit<UploadRecord, 'uploadId'>>): void;
  /**
   * update() without waiting for the database's write lock (a commit under way holds it for as long as
   * it writes, a JSONL import for as long as its lines are read): false when the lock is taken, and
   * nothing was written.
   */
  tryUpdate(id: string, patch: Partial<Omit<UploadRecord, 'uploadId'>>): boolean;
  findById(id: string): UploadRecord | undefined;
  /** Uploads a previous process left queued or processing. */
  unfinished(): UploadRecord[];
  /** Runs `work` in one transaction (nested work of other repositories on the same database included). */
  atomically<T>(work: () => T): T;
}

export interface AcceptUpload {
  wallet: string;
  config: UploadConfig;
  /** The received files, already on disk in `dir`, which the job removes when it ends. */
  files: { path: string; name: string }[];
  dir: string;
  /**
   * A pre-check of archive contents (the central-directory checks of extraction, under the limits the
   * upload is ingested with), so refusals come at upload time.
   */
  precheck?: (files: { path: string; name: string }[], limits: IngestLimits) => Promise<void>;
}

const PROGRESS_EVERY_MS = 250;
/** How often a status write is tried again while another commit holds the write lock... */
const LOCKED_RETRY_MS = 200;
/** ...and for how long at most (a 500,000-line import with 3,072-dimension vectors commits for minutes). */
const LOCKED_WAIT_MAX_MS = 30 * 60_000;

/**
 * Bulk uploads (POST /v1/upload): accepted at once (202), processed one at a time in the background,
 * all or nothing, with progress and per-file results kept in the database.
 */
export class UploadService {
  private queue: Promise<void> = Promise.resolve();
  /**
   * The latest progress of each upload this process is working on. Progress is written to the database
   * without waiting for its write lock, so while a commit holds it (a JSONL import's, for as long as its
   * lines are read: most of a bulk upload) no write gets in; reads of the upload are answered from here.
   */
  private readonly live = new Map<string, Pick<Upload, 'progress' | 'updatedAt'>>();

  constructor(
    private readonly repo: UploadRepository,
    private readonly listings: ListingService,
    private readonly ingestion: IngestionService,
    private readonly limits: IngestLimits = BULK_LIMITS,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Marks uploads interrupted by a crash or restart as failed, so the user knows to send them again. */
  recoverInterrupted(): number {
    const stale = this.repo.unfinished();
    for (const u of stale) {
      // A commit marks its upload completed in its own transaction, so an upload still processing has
      // stored nothing new; 'done' means it had nothing to commit (every file unchanged, so the knowledge
      // base holds them) and only the final status was lost.
      const stored = u.progress.stage === 'done';
      this.repo.update(u.uploadId, {
        status: 'failed',
        progress: failedProgress(u.progress),
        error: {
          code: 'internal_error',
          message: stored
            ? 'The upload was interrupted by a restart of the studio after its documents were stored; only its file report was lost. Check the listing before sending it again.'
            : 'The upload was interrupted by a restart of the studio; nothing was stored. Upload it again.',
        },
        updatedAt: this.now().toISOString(),
      });
    }
    return stale.length;
  }

  /**
   * The checks of an upload's config that need none of its files: the model, the chunk sizes, and the
   * listing it names (404 unknown, 403 not the caller's, 400 holding chunks of another model). The route
   * runs them as soon as the `config` part arrives, so a refused upload need not send its archives first.
   * Returns the named listing.
   */
  checkConfig(config: UploadConfig, wallet: string): Listing | undefined {
    if (config.embedding_model && !(config.embedding_model in EMBEDDING_MODELS)) {
      throw new UnsupportedEmbeddingModel(config.embedding_model, Object.keys(EMBEDDING_MODELS));
    }
    if (
      config.chunk_size !== undefined &&
      config.chunk_overlap !== undefined &&
      config.chunk_overlap >= config.chunk_size
    ) {
      throw new InvalidInput('config.chunk_overlap: must be smaller than chunk_size.');
    }
    if (!config.listing_id) return undefined;
    const listing = this.listings.get(config.listing_id, { wallet });
    if (listing.creatorWallet !== wallet)
      throw new Forbidden(`Only the creator of listing '${listing.id}' may upload to it.`);
    // The listing takes the model asked for when the upload commits (IngestCommand.embeddingModel), not
    // now: a failed upload leaves it as it was, and one queued behind it is checked against the model then.
    if (
      config.embedding_model &&
      config.embedding_model !== listing.embeddingModel &&
      listing.chunkCount > 0
    ) {
      throw new InvalidInput(
        `config.embedding_model: listing '${listing.id}' already holds chunks embedded with ${listing.embeddingModel}; upload with that model or create a new listing.`,
      );
    }
    return listing;
  }

  async accept(request: AcceptUpload): Promise<Upload> {
    const { config, wallet } = request;
    // The listing before the archives: a stranger to it is told 403, not what is wrong with its files.
    const named = this.checkConfig(config, wallet);
    if (request.files.length === 0)
      throw new InvalidInput('files: attach at least one ZIP archive in the `files` field.');
    await request.precheck?.(request.files, this.limits);

    const listing =
      named ??
      this.listings.create(
        {
          title: request.files[0]!.name.replace(/\.[^.]+$/, '') || 'Untitled knowledge base',
          accessModel: 'one_time',
          price: 0,
          embeddingModel: config.embedding_model,
        },
        wallet,
      );
    const createsListing = !named;
    try {
      const record = this.register(request, listing);
      this.queue = this.queue.then(() => this.process(record, request, createsListing));
      return strip(record);
    } catch (err) {
      // A refused upload leaves the marketplace as it was: without the draft it was to fill.
      if (createsListing) this.discardCreatedListing(listing.id, wallet);
      throw err;
    }
  }

  /** Records the upload, queued (its config was checked against the listing by checkConfig). */
  private register(request: AcceptUpload, listing: Listing): UploadRecord {
    const { config, wallet } = request;
    const at = this.now().toISOString();
    const record: UploadRecord = {
      uploadId: newId('upl'),
      listingId: listing.id,
      wallet,
      status: 'queued',
      config: {
        ...config,
        embedding_model: config.embedding_model ?? listing.embeddingModel,
        listing_id: listing.id,
      },
      progress: { stage: 'queued', filesDone: 0, filesTotal: 0, bytesDone: 0, bytesTotal: 0, chunks: 0 },
      files: [],
      documentCount: null,
      chunkCount: null,
      error: null,
      createdAt: at,
      updatedAt: at,
    };
    try {
      this.repo.insert(record);
    } catch (err) {
      throw storageFailure(err, dataDirOf(request.dir)) ?? err;
    }
    return record;
  }

  get(id: string, wallet: string): Upload {
    const record = this.repo.findById(id);
    if (!record || record.wallet !== wallet)
      throw new DomainError('not_found', `Upload '${id}' was not found.`);
    const live = this.live.get(id);
    if (!live) return strip(record);
    // Processing until this process is done with it: its commit marks it completed, and its scratch
    // space (the job's staging database) is given back just after; whoever is told it ended finds
    // the space free.
    return strip({
      ...record,
      status: 'processing',
      files: [],
      documentCount: null,
      chunkCount: null,
      error: null,
      ...live,
    });
  }

  /** Resolves when every accepted upload so far has finished (tests, shutdown). */
  idle(): Promise<void> {
    return this.queue;
  }

  /** Never rejects: a failure is recorded on the upload, and the queue goes on with the next one. */
  private async process(record: UploadRecord, request: AcceptUpload, createsListing: boolean): Promise<void> {
    const id = record.uploadId;
    let lastWrite = 0;
    const onProgress = (p: IngestProgress) => {
      this.live.set(id, { progress: { ...p }, updatedAt: this.now().toISOString() });
      const t = Date.now();
      if (t - lastWrite < PROGRESS_EVERY_MS && p.stage !== 'done') return;
      lastWrite = t;
      // Progress is a courtesy: failing to record it (a full disk) must not fail the upload by itself,
      // and it is not worth a wait: while pre-built embeddings are written into the commit, the commit
      // holds the write lock and this thread would stop for the whole busy timeout. The next one goes in.
      try {
        this.repo.tryUpdate(id, { progress: { ...p }, updatedAt: this.now().toISOString() });
      } catch {
        // Not recorded; the next update is tried PROGRESS_EVERY_MS later.
      }
    };
    // The received files go before the final status is written: whoever sees 'completed' or 'failed'
    // finds the scratch space already given back (a full disk has its room again).
    const giveBack = () => rm(request.dir, { recursive: true, force: true }).catch(() => undefined);
    let finish: () => Promise<void>;
    try {
      await this.updateWhenFree(id, { status: 'processing', updatedAt: this.now().toISOString() });
      const result = await this.ingestion.run({
        listingId: record.listingId,
        // Removed with `request.dir` when the upload ends: what the source store keeps is moved there.
        inputs: request.files.map((f) => ({ ...f, disposable: true })),
        chunking: {
          strategy: request.config.chunking,
          chunkSize: request.config.chunk_size,
          chunkOverlap: request.config.chunk_overlap,
        },
        csvRequiredColumns: request.config.required_columns,
        atomic: true,
        limits: this.limits,
        viewer: { wallet: record.wallet },
        onProgress,
        // A commit marks the upload completed in its own transaction, the received files given back first.
        upload: { id, now: this.now, inputsRead: giveBack },
        embeddingModel: request.config.embedding_model,
      });
      // The precheck refuses archives with no file to ingest; an upload that still yields no document
      // must not report success (nor leave a new empty draft behind).
      if (!result.committed && result.documents.length === 0) {
        throw new InvalidDocument(
          request.files.map((f) => f.name).join(', '),
          'the upload holds no file to ingest; add documents and upload it again.',
        );
      }
      // Nothing to commit (every file unchanged): the status is written here.
      finish = () =>
        result.committed
          ? Promise.resolve()
          : this.updateWhenFree(id, {
              status: 'completed',
              files: result.documents,
              documentCount: result.documentCount,
              chunkCount: result.chunkCount,
              updatedAt: this.now().toISOString(),
            });
    } catch (err) {
      finish = () => this.recordFailure(record, err, request.dir, createsListing);
    }
    await giveBack();
    try {
      await finish();
    } catch (err) {
      await this.recordFailure(record, err, request.dir, createsListing);
    } finally {
      this.live.delete(id);
    }
  }

  /**
   * Writes an upload's status; while another connection's commit holds the write lock it tries again
   * every LOCKED_RETRY_MS, without holding this thread (the connection's busy timeout would stop the
   * server for 5 s, then fail the write, and the upload would stay 'processing').
   */
  private async updateWhenFree(id: string, patch: Partial<Omit<UploadRecord, 'uploadId'>>): Promise<void> {
    const until = Date.now() + LOCKED_WAIT_MAX_MS;
    while (!this.repo.tryUpdate(id, patch)) {
      if (Date.now() > until) throw new Error('the database stayed locked by another commit');
      await delay(LOCKED_RETRY_MS);
    }
  }

  private async recordFailure(
    record: UploadRecord,
    err: unknown,
    dir: string,
    createsListing: boolean,
  ): Promise<void> {
    const id = record.uploadId;
    let current: UploadRecord | undefined;
    try {
      current = this.repo.findById(id);
    } catch {
      // The database is closed (the studio stopped while the upload ran) or cannot be read: the upload
      // stays 'processing' until the next start, when recoverInterrupted() marks it failed.
      return;
    }
    // Its commit completed it: what failed after (removing the job's scratch folder, say) stored nothing
    // and lost nothing, and must not report the stored documents as failed.
    if (current?.status === 'completed') return;
    const known = err instanceof DomainError ? err : storageFailure(err, dataDirOf(dir));
    const error = known
      ? { code: known.code, message: known.message }
      : {
          code: 'internal_error',
          message: `The upload failed unexpectedly: ${err instanceof Error ? err.message : String(err)}`,
        };
    try {
      // The counts of the last progress this process saw (written at most every PROGRESS_EVERY_MS, and
      // not at all while a commit held the lock: a failed upload read `reading 0/3` beside its three file
      // results), under the stage `failed`: it kept reading `embedding` and the file then being read
      // (or `queued`, for one failed before it started) as if it were still under way.
      const progress = failedProgress(this.live.get(id)?.progress ?? current?.progress ?? record.progress);
      await this.updateWhenFree(id, {
        status: 'failed',
        progress,
        error,
        ...(err instanceof IngestionFailed ? { files: err.outcomes.map((o) => notStored(o, error)) } : {}),
        updatedAt: this.now().toISOString(),
      });
    } catch {
      // The database cannot be written either (a full disk): the upload stays 'processing' until the
      // next start, when recoverInterrupted() marks it failed.
      return;
    }
    if (createsListing) this.discardCreatedListing(record.listingId, record.wallet, id);
  }

  /**
   * Removes the draft listing an upload created, once the upload failed or was refused: a failed upload
   * leaves the marketplace as it was (DESIGN §4). Only while the draft holds no documents and no other
   * upload is queued for it (its id was in the 202, so a client may have sent more to it meanwhile).
   * Removing a listing removes its uploads, so the failed upload's record (`keepUpload`) is written back
   * at once: GET /v1/upload/:id still reports the failure, with the id of the listing that is gone.
   */
  private discardCreatedListing(listingId: string, wallet: string, keepUpload?: string): void {
    try {
      // One transaction: the listing's removal takes its uploads with it, and the failed upload's record
      // must not be lost between the two (a crash, a full disk).
      this.repo.atomically(() => {
        const listing = this.listings.get(listingId, { wallet });
        if (listing.status !== 'draft' || listing.documentCount > 0) return;
        const waiting = this.repo
          .unfinished()
          .some((u) => u.listingId === listingId && u.uploadId !== keepUpload);
        if (waiting) return;
        const kept = keepUpload === undefined ? undefined : this.repo.findById(keepUpload);
        this.listings.delete(listingId, { wallet });
        if (kept) this.repo.insert(kept);
      });
    } catch {
      // The draft stays, and the upload's record with it (the database is locked, closed or full): an
      // empty draft its creator may delete.
    }
  }
}

/**
 * An upload is all or nothing: a file that was read without error is not stored when another fails
 * the upload, and must not read `ingested`. Unchanged files keep their stored version, and the failing
 * file its own status and error.
 */
function notStored(outcome: FileOutcome, failure: { code: string; message: string }): UploadFileResult {
  if (outcome.status !== 'ingested') return outcome;
  // Nothing of it was stored: no chunks, and no documents of a JSON file's items.
  const { documents: _documents, ...file } = outcome;
  return {
    ...file,
    status: 'not_stored',
    chunks: 0,
    error: { code: failure.code, message: `Not stored: the upload failed (${failure.message})` },
  };
}

/**
 * The progress a failed upload ends with: the counts it reached, and the stage `failed`, as a completed
 * one ends on `done` (docs/ingestion.md, "Uploads"). No file is being read any more.
 */
function failedProgress(reached: Upload['progress']): Upload['progress'] {
  const { filesDone, filesTotal, bytesDone, bytesTotal, chunks } = reached;
  return { stage: 'failed', filesDone, filesTotal, bytesDone, bytesTotal, chunks };
}

/** An upload's files are received in <dataDir>/tmp/<id>. */
const dataDirOf = (uploadDir: string) => resolve(uploadDir, '..', '..');

function strip(record: UploadRecord): Upload {
  const { wallet: _wallet, ...upload } = record;
  return upload;
}
