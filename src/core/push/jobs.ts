import type { PushJob, PushReport } from '../../shared/push';
import { Conflict, NotFound } from '../errors';
import { newId } from '../ids';
import {
  interruptedRemoteListing,
  interruptedTotals,
  PART_INTERRUPTED_MESSAGE,
  partEnded,
  PUSH_INTERRUPTED_MESSAGE,
  pushProgress,
  pushProgressKey,
  type InterruptedPush,
  type PushJobJournal,
} from './jobJournal';

export type PushJobEvent = { type: 'progress' | 'done'; job: PushJob };

/** Runs one push with the job's signal and progress callback; resolves with the final report. */
export type PushRunner = (signal: AbortSignal, onUpdate: (report: PushReport) => void) => Promise<PushReport>;

interface Job {
  snapshot: PushJob;
  controller: AbortController;
  listeners: Set<(event: PushJobEvent) => void>;
  settled: Promise<PushJob>;
}

const KEEP_FINISHED = 20;

/**
 * The studio's pushes, run in this process in the background like ingestion jobs: a snapshot to read,
 * events to follow, and cancellation. A push that fails before its report exists (an unknown listing,
 * nothing to push) fails the start instead, so the caller gets the error at once. With a journal, the
 * pushes a stop interrupted are reported after the restart (state `interrupted`) until dismissed or
 * until another push of their listing completes.
 */
export class PushJobs {
  private readonly jobs = new Map<string, Job>();

  constructor(private readonly journal?: PushJobJournal) {}

  /** Starts `run` once it has produced its first report; rejects when it fails before that. */
  async start(run: PushRunner): Promise<PushJob> {
    const id = newId('push', 12);
    const controller = new AbortController();
    const listeners = new Set<(event: PushJobEvent) => void>();
    let job: Job | undefined;
    let resolveFirst!: (job: Job) => void;
    const first = new Promise<Job>((resolve) => (resolveFirst = resolve));
    let progressKey = '';
    const onUpdate = (report: PushReport) => {
      const snapshot: PushJob = structuredClone({ ...report, id });
      if (!job) {
        progressKey = pushProgressKey(report);
        job = { snapshot, controller, listeners, settled: undefined as unknown as Promise<PushJob> };
        this.jobs.set(id, job);
        this.forgetOld();
        this.journal?.opened({
          id,
          listingId: report.listingId,
          startedAt: report.startedAt,
          plan: {
            target: report.target,
            remoteListingId: report.remoteListingId,
            parts: report.parts.length,
            files: report.parts.reduce((n, p) => n + p.fileCount, 0) + report.missing.length,
            bytes: report.parts.reduce((n, p) => n + p.bytes, 0),
            missing: report.missing.length,
          },
        });
        resolveFirst(job);
        return;
      }
      job.snapshot = snapshot;
      // Recorded only as parts end or get their upload: a few writes a push, not one per progress tick.
      const key = pushProgressKey(report);
      if (key !== progressKey && report.state === 'running') {
        progressKey = key;
        this.journal?.progressed(id, pushProgress(report));
      }
      this.emit(job, 'progress');
    };
    const running = run(controller.signal, onUpdate).then(
      (report) => finish(report),
      (err: unknown) => {
        if (!job) throw err;
        const message = err instanceof Error ? err.message : String(err);
        return finish({
          ...job.snapshot,
          state: 'failed',
          error: { code: 'internal_error', message: `The push failed: ${message}` },
          finishedAt: new Date().toISOString(),
        });
      },
    );
    const finish = (report: PushReport) => {
      onUpdate(report);
      this.journal?.closed(id);
      if (report.state === 'completed') this.journal?.dismissListing(report.listingId);
      const done = job!;
      this.emit(done, 'done');
      done.listeners.clear();
      return done.snapshot;
    };
    const started = await Promise.race([first, running.then(() => first)]);
    started.settled = running;
    return structuredClone(started.snapshot);
  }

  /** A push of this launch, or one a stop interrupted. */
  get(id: string): PushJob {
    const job = this.jobs.get(id);
    if (job) return structuredClone(job.snapshot);
    const interrupted = this.journal?.interrupted().find((j) => j.id === id);
    if (interrupted) return interruptedSnapshot(interrupted);
    throw notFound(id);
  }

  /** The pushes of this launch, then those a stop interrupted (older than any of this launch), newest first. */
  list(): PushJob[] {
    const current = [...this.jobs.values()].map((j) => structuredClone(j.snapshot)).reverse();
    const interrupted = (this.journal?.interrupted() ?? [])
      .filter((j) => !this.jobs.has(j.id))
      .map(interruptedSnapshot);
    return [...current, ...interrupted];
  }

  /** Forgets an interrupted push's report (a push of this launch cannot be dismissed: it is not on disk). */
  dismiss(id: string): PushJob {
    const snapshot = this.get(id);
    if (snapshot.state !== 'interrupted') {
      throw new Conflict(`Push job '${id}' is ${snapshot.state}: only an interrupted one can be dismissed.`);
    }
    this.journal?.dismiss(id);
    return snapshot;
  }

  subscribe(id: string, listener: (event: PushJobEvent) => void): () => void {
    const job = this.find(id);
    job.listeners.add(listener);
    return () => job.listeners.delete(listener);
  }

  /** Asks a running push to stop; a finished (or interrupted) one is returned as it is. */
  cancel(id: string): PushJob {
    const job = this.jobs.get(id);
    if (!job) return this.get(id);
    if (job.snapshot.state === 'running') job.controller.abort();
    return structuredClone(job.snapshot);
  }

  /** Resolves with the final snapshot (tests and shutdown). */
  settled(id: string): Promise<PushJob> {
    return this.find(id).settled;
  }

  private emit(job: Job, type: PushJobEvent['type']): void {
    const event = { type, job: structuredClone(job.snapshot) };
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
}

const notFound = (id: string) =>
  new NotFound(
    `No push job '${id}' (finished pushes are kept in memory until the studio restarts; interrupted ones until dismissed).`,
  );

/**
 * An interrupted push as the studio reports it: its plan, and its parts as last recorded (when one had
 * ended or got its upload); a part that had not ended is reported failed, cut short by the stop, and its
 * files counted unconfirmed or not stored (interruptedTotals). File lists are not kept.
 */
function interruptedSnapshot({ id, listingId, startedAt, plan, progress }: InterruptedPush): PushJob {
  const interrupted = { code: 'interrupted', message: PART_INTERRUPTED_MESSAGE };
  return {
    id,
    listingId,
    target: plan.target,
    remoteListingId: interruptedRemoteListing(plan, progress),
    state: 'interrupted',
    parts: (progress?.parts ?? []).map((part) =>
      partEnded(part) ? { ...part, files: [] } : { ...part, state: 'failed', error: interrupted, files: [] },
    ),
    missing: [],
    totals: interruptedTotals(plan, progress),
    remoteDocumentCount: progress?.remoteDocumentCount ?? null,
    remoteChunkCount: progress?.remoteChunkCount ?? null,
    error: { code: 'interrupted', message: PUSH_INTERRUPTED_MESSAGE },
    startedAt,
    finishedAt: null,
  };
}
