import { useState } from 'react';

/** The two functions a studio job kind offers its view (ingestion, push). */
export interface JobKind<Job> {
  follow(id: string, onProgress: (job: Job) => void): Promise<Job>;
  cancel(id: string): Promise<unknown>;
}

/**
 * A studio job run from a view: start it, follow its progress until it ends, cancel it; with the
 * starting/cancelling flags and the error a view shows. `run` resolves with the final snapshot (or
 * undefined when starting or following failed: `error` says why).
 */
export function useJobRun<Job extends { id: string; state: string }>(kind: JobKind<Job>) {
  const [job, setJob] = useState<Job>();
  const [error, setError] = useState<unknown>();
  const [starting, setStarting] = useState(false);
  const [cancelling, setCancelling] = useState(false);

  const run = async (start: () => Promise<Job>): Promise<Job | undefined> => {
    setStarting(true);
    setError(undefined);
    try {
      const started = await start();
      setJob(started);
      setStarting(false);
      const final = await kind.follow(started.id, setJob);
      setJob(final);
      return final;
    } catch (err) {
      setError(err);
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

  return {
    job,
    setJob,
    error,
    starting,
    cancelling,
    running: starting || job?.state === 'running',
    run,
    cancel,
  };
}
