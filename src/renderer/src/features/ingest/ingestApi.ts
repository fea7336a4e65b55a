import { followJobEvents } from '../../lib/jobEvents';
import { studioJson } from '../../lib/studioFetch';
import type { JobKind } from '../../lib/useJobRun';
import { latestPerFrame } from './latestPerFrame';
import { multipartBody } from './multipartBody';
import type { ChunkingSettings, ChunkPreview, IngestJob, QueuedFile } from './types';

export async function startIngest(
  listingId: string,
  files: QueuedFile[],
  chunking: ChunkingSettings,
): Promise<IngestJob> {
  const { body, contentType } = await multipartBody(
    { options: JSON.stringify({ ...chunking, paths: files.map((f) => f.path) }) },
    files.map((f) => ({ field: 'files', file: f.file })),
  );
  const data = await studioJson<{ jobId: string; job: IngestJob }>(
    `/listings/${encodeURIComponent(listingId)}/ingest`,
    { method: 'POST', body, headers: { 'Content-Type': contentType } },
  );
  return data.job;
}

/** The listing's ingestion jobs of this launch and those a stop of the studio interrupted, newest first. */
export const listIngestJobs = (listingId: string) =>
  studioJson<IngestJob[]>(`/jobs?listingId=${encodeURIComponent(listingId)}`);

/** Forgets an interrupted ingestion's report. */
export const dismissJob = (jobId: string) =>
  studioJson<IngestJob>(`/jobs/${encodeURIComponent(jobId)}/dismiss`, { method: 'POST' });

/**
 * Follows an ingestion job's server-sent events until `done`; resolves with the final snapshot. Progress
 * is handed on at most once per animation frame, the latest snapshot only.
 */
export async function followJob(
  jobId: string,
  onProgress: (job: IngestJob) => void,
  signal?: AbortSignal,
): Promise<IngestJob> {
  const progress = latestPerFrame(onProgress);
  try {
    return await followJobEvents<IngestJob>(`/jobs/${encodeURIComponent(jobId)}`, progress.push, signal);
  } finally {
    // A snapshot still waiting for its frame would be drawn over the final one.
    progress.cancel();
  }
}

export const cancelJob = (jobId: string) =>
  studioJson<IngestJob>(`/jobs/${encodeURIComponent(jobId)}/cancel`, { method: 'POST' });

/** Ingestion jobs as `useJobRun` runs them. Only an ingestion's last step writes (docs/ingestion.md). */
export const INGEST_JOBS: JobKind<IngestJob> = {
  follow: followJob,
  cancel: cancelJob,
  dismiss: dismissJob,
  lostAdvice:
    'If the studio stopped before the ingestion ended, none of its files were stored: an ingestion stores them all at once at its end. Once the studio answers again, ingest them again; files already stored come back unchanged.',
};

/** A document's re-ingestion, which replaces it only at its end. */
export const REINGEST_JOBS: JobKind<IngestJob> = {
  ...INGEST_JOBS,
  lostAdvice:
    'If the studio stopped before the re-ingestion ended, the document was left as it was. Once the studio answers again, re-ingest it again.',
};

export async function previewFile(
  file: QueuedFile,
  chunking: ChunkingSettings,
  limit: number,
  signal?: AbortSignal,
): Promise<ChunkPreview> {
  const form = new FormData();
  form.set('options', JSON.stringify({ ...chunking, limit }));
  form.set('name', file.path);
  form.append('file', file.file, file.file.name);
  return studioJson<ChunkPreview>('/preview', { method: 'POST', body: form, signal });
}
