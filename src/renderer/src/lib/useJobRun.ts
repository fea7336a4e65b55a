import { useQueryClient } from '@tanstack/react-query';
import { useCallback, useState } from 'react';
import { useLeaveGuard } from './leaveGuard';
import { queryKeys } from './queryClient';
import { errorMessage, StudioApiError } from './studioApi';

/** The two functions a studio job kind offers its view (ingestion, push), and what to do if it is lost. */
export interface JobKind<Job> {
  follow(id: string, onProgress: (job: Job) => void): Promise<Job>;
  cancel(id: string): Promise<unknown>;
  /** Forgets the report of a job a stop of the studio interrupted. */
  dismiss(id: string): Promise<unknown>;
  /**
   * What the creator should know and do when the job can no longer be followed (the studio server
   * stopped or restarted while it ran): what may have been stored, and how to finish the work.
   */
  lostAdvice: string;
}

/**
 * A job that can no longer be followed: the stream of its progress was cut, or the server no longer
 * knows it (jobs live in the server's memory: a restart keeps at most a report of an interrupted one).
 */
export class JobLostError extends StudioApiError {
  constructor(cause: unknown, advice: string) {
    super({ code: 'job_lost', status: 0, message: `${errorMessage(cause)} ${advice}` });
    this.name = 'JobLostError';
  }
}

/**
 * A studio job run from a view: start it, follow its progress until it ends, cancel it, dismiss the
 * report of one a stop interrupted; with the starting/cancelling flags and the error a view shows.
 * `run` resolves with the final snapshot (or undefined when starting or following failed: `error` says
 * why). A job that was started but can no longer be followed is `lost`: it is no longer shown as
 * running (so the view can be used again), the error is a `JobLostError` with the kind's advice, and
 * the studio's status is checked again. While a job runs, closing the desktop app's window asks first
 * (`useLeaveGuard`).
 */
export function useJobRun<Job extends { id: string; state: string }>(kind: JobKind<Job>) {
  const queryClient = useQueryClient();
  const [job, setJob] = useState<Job>();
  const [error, setError] = useState<unknown>();
  const [starting, setStarting] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const { lostAdvice } = kind;

  /** For a view that follows a job it did not start (a push found running when the page opened). */
  const loseTrack = useCallback(
    (cause: unknown) => {
      setJob(undefined);
      setError(new JobLostError(cause, lostAdvice));
      void queryClient.invalidateQueries({ queryKey: queryKeys.info });
    },
    [lostAdvice, queryClient],
  );

  const running = starting || job?.state === 'running';
  useLeaveGuard(running);

  const run = async (start: () => Promise<Job>): Promise<Job | undefined> => {
    setStarting(true);
    setError(undefined);
    let started: Job | undefined;
    try {
      started = await start();
      setJob(started);
      setStarting(false);
      const final = await kind.follow(started.id, setJob);
      setJob(final);
      return final;
    } catch (err) {
      if (started) loseTrack(err);
      else setError(err);
      return undefined;
    } finally {
      setStarting(false);
      setCancelling(false);
    }
  };

  const cancel = async () => {
    if (!job) return;
    setCancelling(true);
    try {
      await kind.cancel(job.id);
    } catch (err) {
      setError(err);
    }
  };

  /** Forgets an interrupted job's report and stops showing it. */
  const dismiss = async (interrupted: Job) => {
    try {
      await kind.dismiss(interrupted.id);
    } catch {
      // Already dismissed (another window), or the server is away: either way it is not shown again here.
    }
    setJob((current) => (current?.id === interrupted.id ? undefined : current));
  };

  return {
    job,
    setJob,
    error,
    /** For a view whose error went out of date (Ingest's, once the files it named left the queue). */
    setError,
    lost: error instanceof JobLostError,
    loseTrack,
    starting,
    cancelling,
    running,
    run,
    cancel,
    dismiss,
  };
}
