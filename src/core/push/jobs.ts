import type { PushJob, PushReport } from '../../shared/push';
import { NotFound } from '../errors';
import { newId } from '../ids';

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
 * nothing to push) fails the start instead, so the caller gets the error at once.
 */
export class PushJobs {
  private readonly jobs = new Map<string, Job>();

  /** Starts `run` once it has produced its first report; rejects when it fails before that. */
  async start(run: PushRunner): Promise<PushJob> {
    const id = newId('push', 12);
    const controller = new AbortController();
    const listeners = new Set<(event: PushJobEvent) => void>();
    let job: Job | undefined;
    let resolveFirst!: (job: Job) => void;
    const first = new Promise<Job>((resolve) => (resolveFirst = resolve));
    const onUpdate = (report: PushReport) => {
      const snapshot: PushJob = structuredClone({ ...report, id });
      if (!job) {
        job = { snapshot, controller, listeners, settled: undefined as unknown as Promise<PushJob> };
        this.jobs.set(id, job);
        this.forgetOld();
        resolveFirst(job);
        return;
      }
      job.snapshot = snapshot;
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
      const done = job!;
      this.emit(done, 'done');
      done.listeners.clear();
      return done.snapshot;
    };
    const started = await Promise.race([first, running.then(() => first)]);
    started.settled = running;
    return structuredClone(started.snapshot);
  }

  get(id: string): PushJob {
    return structuredClone(this.find(id).snapshot);
  }

  list(): PushJob[] {
    return [...this.jobs.values()].map((j) => structuredClone(j.snapshot)).reverse();
  }

  subscribe(id: string, listener: (event: PushJobEvent) => void): () => void {
    const job = this.find(id);
    job.listeners.add(listener);
    return () => job.listeners.delete(listener);
  }

  cancel(id: string): PushJob {
    const job = this.find(id);
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
    if (!job) throw new NotFound(`No push job '${id}' (jobs are kept in memory until the studio restarts).`);
    return job;
  }

  private forgetOld(): void {
    const finished = [...this.jobs.values()].filter((j) => j.snapshot.state !== 'running');
    for (const job of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) {
      this.jobs.delete(job.snapshot.id);
    }
  }
}
