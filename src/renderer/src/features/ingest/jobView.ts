import { FilesChangedError } from '../../lib/studioFetch';
import { JobLostError } from '../../lib/useJobRun';
import { QUEUE } from './ingestApi';
import type { FileOutcome, IngestJob, QueuedFile, Stage } from './types';

const STAGE_PERCENT: Record<Stage, number> = {
  reading: 10,
  parsing: 30,
  chunking: 50,
  embedding: 75,
  storing: 100,
  processed: 100,
  done: 100,
  interrupted: 0,
};

export const STAGE_LABELS: Record<Stage, string> = {
  reading: 'Reading',
  parsing: 'Parsing',
  chunking: 'Chunking',
  embedding: 'Embedding',
  storing: 'Storing',
  processed: 'Waiting to store',
  done: 'Done',
  interrupted: 'Interrupted',
};

export const filePercent = (stage: Stage): number => STAGE_PERCENT[stage];

/** Overall progress 0..100: files processed, the current file's stage, and the final store step. */
export function overallPercent(job: IngestJob): number {
  if (job.state !== 'running') return 100;
  const p = job.progress;
  if (!p || p.filesTotal === 0) return 0;
  if (p.stage === 'storing') return 95;
  const current = p.file && p.filesDone < p.filesTotal ? STAGE_PERCENT[p.stage] / 100 : 0;
  return Math.round(((p.filesDone + current) / p.filesTotal) * 90);
}

export function outcomeCounts(outcomes: FileOutcome[]): Record<FileOutcome['status'], number> {
  const counts = { ingested: 0, unchanged: 0, rejected: 0 };
  for (const o of outcomes) counts[o.status]++;
  return counts;
}

/**
 * What the live region says when an ingestion ends: its outcome in numbers ("Ingestion finished: 2
 * ingested, 0 unchanged, 1 rejected."), or that it failed or was cancelled.
 */
export function jobEndAnnouncement(job: IngestJob): string {
  if (job.state === 'done' && job.result) {
    const c = outcomeCounts(job.result.documents);
    return `Ingestion finished: ${c.ingested} ingested, ${c.unchanged} unchanged, ${c.rejected} rejected.`;
  }
  if (job.state === 'cancelled') return 'Ingestion cancelled.';
  if (job.state === 'interrupted') return 'Ingestion interrupted.';
  return job.error ? `Ingestion failed: ${job.error.message}` : 'Ingestion failed.';
}

/** What the server says of a missing or refused provider key names the CLI and the environment only. */
const PROVIDER_KEY_HINT = /`kbstudio settings set (openai|cohere)\.apiKey/;

/** An ingestion's error (the job's or a file's) as shown, with where the studio sets a provider key. */
export function ingestErrorText(error: { code: string; message: string }): string {
  return error.code === 'embedding_provider_unavailable' && PROVIDER_KEY_HINT.test(error.message)
    ? `${error.message} (in the studio: Settings → Embedding providers)`
    : error.message;
}

/**
 * The error of a start of an ingestion once the queue changed. Files refused as changed on disk are named
 * while they are queued and still marked so: one added again (or removed) is no longer, and the error
 * goes with the last of them. Another refusal was of the queue as it was, and goes; a lost ingestion's
 * notice stays (the studio may yet report it). The same error when nothing changed.
 */
export function startErrorAfterQueueChange(error: unknown, queue: readonly QueuedFile[]): unknown {
  if (error === undefined || error instanceof JobLostError) return error;
  if (!(error instanceof FilesChangedError)) return undefined;
  const marked = new Set(queue.filter((f) => f.changed).map((f) => f.path));
  const names = error.names.filter((name) => marked.has(name));
  if (names.length === error.names.length) return error;
  return names.length === 0 ? undefined : new FilesChangedError(names, QUEUE);
}
