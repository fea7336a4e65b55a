import type { FileOutcome, IngestJob, Stage } from './types';

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

/** What the server says of a missing or refused provider key names the CLI and the environment only. */
const PROVIDER_KEY_HINT = /`kbstudio settings set (openai|cohere)\.apiKey/;

/** An ingestion's error (the job's or a file's) as shown, with where the studio sets a provider key. */
export function ingestErrorText(error: { code: string; message: string }): string {
  return error.code === 'embedding_provider_unavailable' && PROVIDER_KEY_HINT.test(error.message)
    ? `${error.message} (in the studio: Settings → Embedding providers)`
    : error.message;
}

/**
 * The ingestion this page lost track of (its stream cut, the studio stopped), and whether the studio has
 * since shown that same job again: as interrupted (its report says what was stored and what to do), or
 * still running (followed again). Once it has, "Lost track of the ingestion" is out of date.
 */
export interface LostIngestion {
  id: string;
  reported: boolean;
}

/** The lost ingestion once `found` is shown: reported when it is that same job. */
export function afterJobShown(
  lost: LostIngestion | undefined,
  found: Pick<IngestJob, 'id'>,
): LostIngestion | undefined {
  return lost && lost.id === found.id && !lost.reported ? { ...lost, reported: true } : lost;
}

/**
 * Whether the page says it lost track of an ingestion: not once the studio showed that job again, whose
 * report (or progress) says what happened to it. Both at once told the creator to ingest the files again
 * and, beside it, that the ingestion was interrupted and what it stored.
 */
export const lostNoticeShown = (lost: boolean, lostIngestion: LostIngestion | undefined): boolean =>
  lost && !lostIngestion?.reported;
