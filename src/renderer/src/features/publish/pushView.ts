import type { PushFileReport, PushFileStatus, PushJob, PushPart, PushTarget } from '../../../../shared/push';

export const FILE_STATUS_COLOR: Record<PushFileStatus | 'pending', string> = {
  accepted: 'teal',
  unchanged: 'gray',
  rejected: 'red',
  not_stored: 'orange',
  unconfirmed: 'yellow',
  missing: 'yellow',
  pending: 'blue',
};

export const FILE_STATUS_LABEL: Record<PushFileStatus | 'pending', string> = {
  accepted: 'accepted',
  unchanged: 'unchanged',
  rejected: 'rejected',
  not_stored: 'not stored',
  unconfirmed: 'unconfirmed',
  missing: 'missing',
  pending: 'pending',
};

export const PART_STATE_LABEL: Record<PushPart['state'], string> = {
  waiting: 'Waiting',
  packing: 'Packing',
  sending: 'Sending',
  processing: 'Remote processing',
  completed: 'Done',
  failed: 'Failed',
};

const pct = (done: number, total: number) =>
  total > 0 ? Math.min(100, Math.round((100 * done) / total)) : 0;

/**
 * Why a part ended without its outcome known, when it did: `interrupted` (a stop of the studio cut it
 * short) or `unconfirmed` (the service was still processing it when the push stopped). Not the part's
 * own failure: what the service holds of it is told by the next push.
 */
export function partCutShort(part: PushPart): 'interrupted' | 'unconfirmed' | undefined {
  const code = part.error?.code;
  return part.state === 'failed' && (code === 'interrupted' || code === 'unconfirmed') ? code : undefined;
}

/** How far a part got in each phase, 0..100. */
export function partPercents(part: PushPart): { packing: number; sending: number; remote: number } {
  const packed = part.archiveBytes !== null;
  const processed =
    part.state === 'completed' || (part.state === 'failed' && part.uploadId !== null && !partCutShort(part));
  return {
    packing: packed ? 100 : pct(part.packing.bytesDone, part.bytes),
    sending: part.state === 'processing' || processed ? 100 : pct(part.sending.loaded, part.sending.total),
    remote: processed ? 100 : part.remote ? pct(part.remote.filesDone, part.remote.filesTotal) : 0,
  };
}

/** Every file of the push in report order, with its part. */
export function reportFiles(job: PushJob): (PushFileReport & { part: number | null })[] {
  return [
    ...job.parts.flatMap((p) => p.files.map((f) => ({ ...f, part: p.index }))),
    ...job.missing.map((f) => ({ ...f, part: null })),
  ];
}

/**
 * The saved target an interrupted push went to, so that pushing again (which resumes it) goes there:
 * undefined for another push, or when no saved target has that address.
 */
export function resumeTargetOf(job: PushJob | undefined, targets: PushTarget[]): PushTarget | undefined {
  if (job?.state !== 'interrupted') return undefined;
  return targets.find((t) => t.baseUrl === job.target);
}

/**
 * What to tell the creator before pushing again after an interrupted push, when Push would not resume
 * it: its address is no saved target, or another target is chosen.
 */
export function resumeNote(
  job: PushJob | undefined,
  targets: PushTarget[],
  targetId: string | null,
): string | undefined {
  if (job?.state !== 'interrupted') return undefined;
  const resume = resumeTargetOf(job, targets);
  if (!resume) {
    return `The interrupted push went to ${job.target}, which is not a saved target: add it (with its API key) to resume the push there.`;
  }
  if (resume.id === targetId) return undefined;
  return `The interrupted push went to ${resume.label ?? resume.baseUrl}: choose it as the target to resume it there; Push sends to the chosen target.`;
}

/** A title for why a push stopped, in the words a creator would look for. */
export function failureTitle(code: string): string {
  switch (code) {
    case 'unauthorized':
      return 'Authentication failed';
    case 'forbidden':
      return 'The key may not upload to this listing';
    case 'remote_listing_not_visible':
      return 'This key cannot see the listing pushed before';
    case 'not_a_marketplace_api':
      return 'No marketplace API at this address';
    case 'remote_unreachable':
      return 'Cannot reach the service';
    case 'cancelled':
      return 'Push cancelled';
    case 'interrupted':
      return 'The studio stopped during the push';
    case 'unsupported_embedding_model':
      return 'The service does not support this embedding model';
    default:
      return 'The push failed';
  }
}
