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
