import type { PushFileReport, PushFileStatus, PushJob, PushPart } from '../../../../shared/push';

export const FILE_STATUS_COLOR: Record<PushFileStatus | 'pending', string> = {
  accepted: 'teal',
  unchanged: 'gray',
  rejected: 'red',
  not_stored: 'orange',
  missing: 'yellow',
  pending: 'blue',
};

export const FILE_STATUS_LABEL: Record<PushFileStatus | 'pending', string> = {
  accepted: 'accepted',
  unchanged: 'unchanged',
  rejected: 'rejected',
  not_stored: 'not stored',
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

/** How far a part got in each phase, 0..100. */
export function partPercents(part: PushPart): { packing: number; sending: number; remote: number } {
  const packed = part.archiveBytes !== null;
  const processed = part.state === 'completed' || (part.state === 'failed' && part.uploadId !== null);
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
