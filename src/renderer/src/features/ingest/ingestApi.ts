import { createParser } from 'eventsource-parser';
import { readStudioToken, StudioApiError } from '../../lib/studioApi';
import type { ChunkingSettings, ChunkPreview, IngestJob, QueuedFile } from './types';

const TOKEN_HEADER = 'X-Studio-Token';

function token(): string {
  const value = readStudioToken();
  if (!value) {
    throw new StudioApiError({
      code: 'missing_token',
      status: 0,
      message: 'This page has no studio token. Open the studio from the address `kbstudio serve` printed.',
    });
  }
  return value;
}

/** fetch against /studio with the token; a failure becomes a StudioApiError with the server's message. */
export async function studioFetch(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set(TOKEN_HEADER, token());
  let response: Response;
  try {
    response = await fetch(`/studio${path}`, { ...init, headers });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new StudioApiError({
      code: 'network_error',
      status: 0,
      message: `Cannot reach the studio server (${(err as Error).message}). Is it still running?`,
    });
  }
  if (!response.ok) {
    const text = await response.text();
    let body: { error?: { code: string; message: string; requestId?: string } } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // Not the server's error body: keep what was said.
    }
    throw new StudioApiError({
      code: body.error?.code ?? `http_${response.status}`,
      status: response.status,
      message:
        body.error?.message ?? (text.slice(0, 300) || `The studio server answered ${response.status}.`),
      requestId: body.error?.requestId,
    });
  }
  return response;
}

export async function studioJson<T>(path: string, init?: RequestInit): Promise<T> {
  return ((await (await studioFetch(path, init)).json()) as { data: T }).data;
}

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

/** Follows a job's server-sent events until `done`; resolves with the final snapshot. */
export async function followJob(
  jobId: string,
  onProgress: (job: IngestJob) => void,
  signal?: AbortSignal,
): Promise<IngestJob> {
  const response = await studioFetch(`/jobs/${encodeURIComponent(jobId)}/events`, { signal });
  let final: IngestJob | undefined;
  const parser = createParser({
    onEvent: (event) => {
      const job = JSON.parse(event.data) as IngestJob;
      if (event.event === 'done') final = job;
      onProgress(job);
    },
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parser.feed(value);
  }
  // The stream can end without `done` (the server stopped): the snapshot says where the job is.
  return final ?? studioJson<IngestJob>(`/jobs/${encodeURIComponent(jobId)}`);
}

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
