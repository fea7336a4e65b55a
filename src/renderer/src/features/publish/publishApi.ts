import type { PushJob, PushTarget, PushTargetInput } from '../../../../shared/push';
import { followJobEvents } from '../../lib/jobEvents';
import { studioJson } from '../../lib/studioFetch';
import type { JobKind } from '../../lib/useJobRun';

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

export const startPush = (listingId: string, targetId: string, options: { newListing?: boolean } = {}) =>
  studioJson<PushJob>('/push', { method: 'POST', ...json({ listingId, targetId, ...options }) });

/** Push jobs of this launch, then those a stop of the studio interrupted, newest first. */
export const listPushJobs = () => studioJson<PushJob[]>('/push/jobs');

/** Forgets an interrupted push's report. */
export const dismissPush = (jobId: string) =>
  studioJson<PushJob>(`/push/jobs/${encodeURIComponent(jobId)}/dismiss`, { method: 'POST' });

export const cancelPush = (jobId: string) =>
  studioJson<PushJob>(`/push/jobs/${encodeURIComponent(jobId)}/cancel`, { method: 'POST' });

/** Follows a push job's server-sent events until `done`; resolves with the final report. */
export const followPush = (jobId: string, onProgress: (job: PushJob) => void, signal?: AbortSignal) =>
  followJobEvents<PushJob>(`/push/jobs/${encodeURIComponent(jobId)}`, onProgress, signal);

/** Push jobs as `useJobRun` runs them. A remote keeps whole parts, and pushing again resumes (docs/push.md). */
export const PUSH_JOBS: JobKind<PushJob> = {
  follow: followPush,
  cancel: cancelPush,
  dismiss: dismissPush,
  lostAdvice:
    'The parts the service had completed stay there. Once the studio answers again, push again: the push resumes, and what the service already holds comes back unchanged.',
};
