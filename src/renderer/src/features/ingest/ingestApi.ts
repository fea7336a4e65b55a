import { followJobEvents } from '../../lib/jobEvents';
import { studioJson } from '../../lib/studioFetch';
import type { ChunkingSettings, ChunkPreview, IngestJob, QueuedFile } from './types';

export async function startIngest(
  listingId: string,
  files: QueuedFile[],
  chunking: ChunkingSettings,
): Promise<IngestJob> {
  const form = new FormData();
  form.set('options', JSON.stringify({ ...chunking, paths: files.map((f) => f.path) }));
  for (const f of files) form.append('files', f.file, f.file.name);
  const data = await studioJson<{ jobId: string; job: IngestJob }>(
    `/listings/${encodeURIComponent(listingId)}/ingest`,
    { method: 'POST', body: form },
  );
  return data.job;
}

/** Follows an ingestion job's server-sent events until `done`; resolves with the final snapshot. */
export const followJob = (jobId: string, onProgress: (job: IngestJob) => void, signal?: AbortSignal) =>
  followJobEvents<IngestJob>(`/jobs/${encodeURIComponent(jobId)}`, onProgress, signal);

export const cancelJob = (jobId: string) =>
  studioJson<IngestJob>(`/jobs/${encodeURIComponent(jobId)}/cancel`, { method: 'POST' });

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
