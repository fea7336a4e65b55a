import { createParser } from 'eventsource-parser';
import type { PushJob, PushTarget, PushTargetInput } from '../../../../shared/push';
import { studioFetch, studioJson } from '../ingest/ingestApi';

const json = (body: unknown): RequestInit => ({
  headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(body),
});

/** The hosted service's address from Settings (`hosted.url`), if one is set. */
export async function hostedUrl(): Promise<string | null> {
  const settings = await studioJson<{ key: string; value: string | null }[]>('/settings');
  return settings.find((s) => s.key === 'hosted.url')?.value ?? null;
}

export const listTargets = () => studioJson<PushTarget[]>('/push/targets');

export const saveTarget = (input: PushTargetInput) =>
  studioJson<PushTarget>('/push/targets', { method: 'POST', ...json(input) });

export const removeTarget = (id: string) =>
  studioJson<PushTarget>(`/push/targets/${encodeURIComponent(id)}`, { method: 'DELETE' });

export const startPush = (listingId: string, targetId: string) =>
  studioJson<PushJob>('/push', { method: 'POST', ...json({ listingId, targetId }) });

/** Push jobs of this launch, newest first. */
export const listPushJobs = () => studioJson<PushJob[]>('/push/jobs');

export const cancelPush = (jobId: string) =>
  studioJson<PushJob>(`/push/jobs/${encodeURIComponent(jobId)}/cancel`, { method: 'POST' });

/** Follows a push job's server-sent events until `done`; resolves with the final report. */
export async function followPush(
  jobId: string,
  onProgress: (job: PushJob) => void,
  signal?: AbortSignal,
): Promise<PushJob> {
  const path = `/push/jobs/${encodeURIComponent(jobId)}`;
  const response = await studioFetch(`${path}/events`, { signal });
  let final: PushJob | undefined;
  const parser = createParser({
    onEvent: (event) => {
      const job = JSON.parse(event.data) as PushJob;
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
  // The stream can end without `done` (the server stopped): the snapshot says where the push is.
  return final ?? studioJson<PushJob>(path);
}
