import { basename, dirname, resolve, sep } from 'node:path';
import { Conflict, DomainError, NotFound } from '../errors';
import { newId } from '../ids';
import { storageFailure } from '../uploads/storageErrors';
import type { ChunkingOptions } from './chunkers';
import {
  interruptionMessage,
  type IngestJobJournal,
  type IngestJobKind,
  type InterruptedIngestion,
} from './jobJournal';
import type { IngestLimits } from './limits';
import type { IngestProgress, IngestResult, IngestStage, UnpackingProgress } from './pipeline';
import type { IngestCommand } from './service';
import type { IngestInput } from './sources';

/** `interrupted`: found unfinished when the studio started (a stop cut it short; see jobJournal.ts). */
export type IngestJobState = 'running' | 'done' | 'failed' | 'cancelled' | 'interrupted';

export interface IngestJobFile {
  source: string;
  /**
   * The last stage reported for the file; `processed` once the pipeline moved past it; `interrupted`
   * for each name an interrupted job was given.
   */
  stage: IngestStage | 'processed' | 'interrupted';
}

export interface IngestJobSnapshot {
  id: string;
  listingId: string;
  kind: IngestJobKind;
  state: IngestJobState;
  startedAt: string;
  /** When it ended; null while it runs, and for an interrupted job (the stop left no time behind). */
  finishedAt: string | null;
  progress: IngestProgress | null;
  /** Files in the order the pipeline reached them (archives are expanded to their entries). */
  files: IngestJobFile[];
  result: IngestResult | null;
  error: { code: string; message: string } | null;
}

/**
 * `job` is the live snapshot, not a copy: read it during the call (get() gives a copy to keep). A copy
 * per event cost a followed ingestion of 3,231 files 12-17 s of the server's thread.
 */
export type IngestJobEvent =
  { type: 'progress'; job: Readonly<IngestJobSnapshot> } | { type: 'done'; job: Readonly<IngestJobSnapshot> };

export interface StartJobRequest {
  listingId: string;
  /** `ingest` unless said otherwise. */
  kind?: IngestJobKind;
  inputs: IngestInput[];
  chunking?: ChunkingOptions;
  csvRequiredColumns?: string[];
  limits: IngestLimits;
  /**
   * The data directory, named when its disk is full or read-only; by default the folder holding the
   * `tmp` folder the inputs were received in.
   */
  dataDir?: string;
  /** Runs when the job has ended, whatever the outcome (removes the uploaded files). */
  cleanup?: () => Promise<void> | void;
}

type Runner = (command: IngestCommand) => Promise<IngestResult>;

interface Job {
  snapshot: IngestJobSnapshot;
  /** The snapshot's files by source, and those not yet `processed`: each progress event costs O(1). */
  fileBySource: Map<string, IngestJobFile>;
  working: Set<IngestJobFile>;
  controller: AbortController;
  listeners: Set<(event: IngestJobEvent) => void>;
}

/** Finished jobs kept for late readers (a reloaded page); older ones are forgotten. */
const KEEP_FINISHED = 50;

/**
 * The studio's ingestions: each runs in this process in the background, non-atomic like the CLI,
 * reporting progress to whoever listens; cancelling aborts it before anything is committed. Jobs live
 * in memory; with a journal, those a stop interrupted are reported after the restart (state
 * `interrupted`) until dismissed or until another ingestion into their listing completes.
 */
export class IngestJobs {
  private readonly jobs = new Map<string, Job>();

  constructor(
    private readonly run: Runner,
    private readonly now: () => Date = () => new Date(),
    private readonly journal?: IngestJobJournal,
  ) {}

  start(request: StartJobRequest): IngestJobSnapshot {
    const job: Job = {
      snapshot: {
        id: newId('job', 12),
        listingId: request.listingId,
        kind: request.kind ?? 'ingest',
        state: 'running',
        startedAt: this.now().toISOString(),
        finishedAt: null,
        progress: null,
        files: [],
        result: null,
        error: null,
      },
      fileBySource: new Map(),
      working: new Set(),
      controller: new AbortController(),
      listeners: new Set(),
    };
    this.jobs.set(job.snapshot.id, job);
    this.forgetOld();
    const { id, listingId, kind, startedAt } = job.snapshot;
    this.journal?.opened({
      id,
      listingId,
      kind,
      startedAt,
      sources: request.inputs.map((i) => i.name ?? basename(i.path)),
    });
    void this.execute(job, request);
    return this.copy(job);
  }

  /** A job of this launch, or one a stop interrupted. */
  get(id: string): IngestJobSnapshot {
    const job = this.jobs.get(id);
    if (job) return this.copy(job);
    const interrupted = this.journal?.interrupted().find((j) => j.id === id);
    if (interrupted) return interruptedSnapshot(interrupted);
    throw notFound(id);
  }

  /** The jobs of this launch and those a stop interrupted, newest first; of one listing if given. */
  list(listingId?: string): IngestJobSnapshot[] {
    const current = [...this.jobs.values()]
      .filter((j) => listingId === undefined || j.snapshot.listingId === listingId)
      .map((j) => this.copy(j))
      .reverse();
    // Interrupted jobs are from earlier launches: older than any job of this one.
    const interrupted = (this.journal?.interrupted(listingId) ?? [])
      .filter((j) => !this.jobs.has(j.id))
      .map(interruptedSnapshot);
    return [...current, ...interrupted];
  }

  /** Forgets an interrupted job's report (a job of this launch cannot be dismissed: it is not on disk). */
  dismiss(id: string): IngestJobSnapshot {
    const snapshot = this.get(id);
    if (snapshot.state !== 'interrupted') {
      throw new Conflict(
        `Ingestion job '${id}' is ${snapshot.state}: only an interrupted one can be dismissed.`,
      );
    }
    this.journal?.dismiss(id);
    return snapshot;
  }

  /** Calls `listener` on every change until the job ends; returns the unsubscribe function. */
  subscribe(id: string, listener: (event: IngestJobEvent) => void): () => void {
    const job = this.find(id);
    job.listeners.add(listener);
    return () => job.listeners.delete(listener);
  }

  /** Asks a running job to stop; a finished (or interrupted) job is returned as it is. */
  cancel(id: string): IngestJobSnapshot {
    const job = this.jobs.get(id);
    if (!job) return this.get(id);
    if (job.snapshot.state === 'running') job.controller.abort();
    return this.copy(job);
  }

  /** Resolves when the job has ended (tests and shutdown). */
  async settled(id: string): Promise<IngestJobSnapshot> {
    const job = this.find(id);
    if (job.snapshot.state !== 'running') return this.copy(job);
    return new Promise((resolve) => {
      const off = this.subscribe(id, (event) => {
        if (event.type !== 'done') return;
        off();
        resolve(this.copy(job));
      });
    });
  }

  private async execute(job: Job, request: StartJobRequest): Promise<void> {
    const { snapshot } = job;
    let finish: () => void;
    try {
      const result = await this.run({
        listingId: request.listingId,
        inputs: request.inputs,
        chunking: request.chunking,
        csvRequiredColumns: request.csvRequiredColumns,
        atomic: false,
        limits: request.limits,
        signal: job.controller.signal,
        onProgress: (progress) => this.onProgress(job, progress),
        onUnpacking: (unpacking) => this.onUnpacking(job, unpacking),
      });
      finish = () => {
        for (const f of snapshot.files) f.stage = 'done';
        snapshot.result = result;
        snapshot.state = 'done';
      };
    } catch (err) {
      const cancelled = job.controller.signal.aborted;
      finish = () => {
        if (cancelled) {
          snapshot.state = 'cancelled';
          snapshot.error = { code: 'cancelled', message: 'The ingestion was cancelled; nothing was stored.' };
          return;
        }
        snapshot.state = 'failed';
        const known = err instanceof DomainError ? err : storageFailure(err, dataDirOf(request));
        snapshot.error = known
          ? { code: known.code, message: known.message }
          : { code: 'internal_error', message: `The ingestion failed: ${(err as Error).message}` };
      };
    }
    // Off the journal at once: a stop from here on finds the job's commit made (or never to be made).
    this.journal?.closed(snapshot.id);
    // The received files go first: a job seen as ended has given its scratch space back.
    await Promise.resolve(request.cleanup?.()).catch(() => undefined);
    finish();
    job.fileBySource.clear();
    job.working.clear();
    if (snapshot.state === 'done') this.journal?.dismissListing(snapshot.listingId);
    snapshot.finishedAt = this.now().toISOString();
    this.emit(job, 'done');
    job.listeners.clear();
  }

  /** A file's stage; the files before it, once another file is reported, are `processed`. */
  private onProgress(job: Job, progress: IngestProgress): void {
    const { snapshot, fileBySource, working } = job;
    snapshot.progress = progress;
    if (progress.file) {
      let current = fileBySource.get(progress.file);
      for (const f of working) {
        if (f === current) continue;
        f.stage = 'processed';
        working.delete(f);
      }
      if (current) current.stage = progress.stage;
      else {
        current = { source: progress.file, stage: progress.stage };
        snapshot.files.push(current);
        fileBySource.set(current.source, current);
      }
      working.add(current);
    } else if (progress.stage === 'storing' || progress.stage === 'done') {
      for (const f of working) f.stage = 'processed';
      working.clear();
    }
    this.emit(job, 'progress');
  }

  /**
   * An archive being extracted, before the first file is read: shown instead of no progress at all
   * (the page said "Receiving files…" for the 8 s an archive of 8,000 entries took).
   */
  private onUnpacking(job: Job, unpacking: UnpackingProgress): void {
    job.snapshot.progress = {
      stage: 'reading',
      filesDone: 0,
      filesTotal: 0,
      bytesDone: 0,
      bytesTotal: 0,
      chunks: 0,
      unpacking,
    };
    this.emit(job, 'progress');
  }

  private emit(job: Job, type: IngestJobEvent['type']): void {
    const event = { type, job: job.snapshot };
    for (const listener of job.listeners) listener(event);
  }

  private find(id: string): Job {
    const job = this.jobs.get(id);
    if (!job) throw notFound(id);
    return job;
  }

  private forgetOld(): void {
    const finished = [...this.jobs.values()].filter((j) => j.snapshot.state !== 'running');
    for (const job of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
      this.jobs.delete(job.snapshot.id);
    }
  }

  private copy(job: Job): IngestJobSnapshot {
    return structuredClone(job.snapshot);
  }
}

const notFound = (id: string) =>
  new NotFound(
    `No ingestion job '${id}' (finished jobs are kept in memory until the studio restarts; interrupted ones until dismissed).`,
  );

/** An interrupted job as the studio reports it: the names it was given, none of them known stored. */
function interruptedSnapshot(job: InterruptedIngestion): IngestJobSnapshot {
  return {
    id: job.id,
    listingId: job.listingId,
    kind: job.kind,
    state: 'interrupted',
    startedAt: job.startedAt,
    finishedAt: null,
    progress: null,
    files: job.sources.map((source) => ({ source, stage: 'interrupted' })),
    result: null,
    error: { code: 'interrupted', message: interruptionMessage(job) },
  };
}

/** The data directory of a job: given, or the parent of the `tmp` folder its uploaded inputs are in. */
function dataDirOf(request: StartJobRequest): string {
  if (request.dataDir) return request.dataDir;
  const input = resolve(request.inputs[0]?.path ?? '.');
  const parts = input.split(sep);
  const tmp = parts.lastIndexOf('tmp');
  return tmp > 0 ? parts.slice(0, tmp).join(sep) || sep : dirname(input);
}
