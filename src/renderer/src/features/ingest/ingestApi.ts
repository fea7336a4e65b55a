import { followJobEvents } from '../../lib/jobEvents';
import { studioJson, type UploadedFiles } from '../../lib/studioFetch';
import type { JobKind } from '../../lib/useJobRun';
import { extensionOf } from './fileTypes';
import { latestPerFrame } from './latestPerFrame';
import { multipartBody } from './multipartBody';
import type { ChunkPreview, IngestJob, IngestSettings, QueuedFile } from './types';

/** Where Ingest keeps the files it sends, as a FilesChangedError names it. */
export const QUEUE = 'the queue';

/**
 * The queued files a request carries, named by their paths: a send that fails because one changed on
 * disk names it (FilesChangedError) rather than blaming the server.
 */
const queued = (files: readonly QueuedFile[]): UploadedFiles => ({
  files: files.map((f) => ({ name: f.path, file: f.file })),
  keptIn: QUEUE,
});

/** The `options` part of an ingestion: the chunking, the CSV row rule when one was chosen, the paths. */
export function ingestOptions(files: readonly QueuedFile[], settings: IngestSettings) {
  return { ...settings, paths: files.map((f) => f.path) };
}

export async function startIngest(
  listingId: string,
  files: QueuedFile[],
  settings: IngestSettings,
): Promise<IngestJob> {
  const { body, contentType } = await multipartBody(
    { options: JSON.stringify(ingestOptions(files, settings)) },
    files.map((f) => ({ field: 'files', file: f.file })),
  );
  const data = await studioJson<{ jobId: string; job: IngestJob }>(
    `/listings/${encodeURIComponent(listingId)}/ingest`,
    { method: 'POST', body, headers: { 'Content-Type': contentType } },
    queued(files),
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

/**
 * The `options` part of a preview: the CSV row rule only for a CSV file, so that changing it does not
 * ask again for the preview of another document (the options are part of its query key).
 */
export function previewOptions(path: string, settings: IngestSettings, limit: number) {
  const { csvRequiredColumns, ...chunking } = settings;
  return extensionOf(path) === '.csv' && csvRequiredColumns !== undefined
    ? { ...chunking, csvRequiredColumns, limit }
    : { ...chunking, limit };
}

export async function previewFile(
  file: QueuedFile,
  settings: IngestSettings,
  limit: number,
  signal?: AbortSignal,
): Promise<ChunkPreview> {
  const form = new FormData();
  form.set('options', JSON.stringify(previewOptions(file.path, settings, limit)));
  form.set('name', file.path);
  form.append('file', file.file, file.file.name);
  return studioJson<ChunkPreview>('/preview', { method: 'POST', body: form, signal }, queued([file]));
}
