import type { PushPart, PushReport } from '../../shared/push';
import type { JobJournal } from '../jobJournal';

/**
 * What the studio keeps on disk of each push while it runs, so that one a stop cut short (a kill, a
 * crash, the app closed) is reported after the restart instead of vanishing with the server's memory.
 */

/** What a push set out to do, from its first report. */
export interface PushPlan {
  /** The remote's `/v1` base URL. */
  target: string;
  remoteListingId: string | null;
  parts: number;
  /** Every file of the push, those without a kept original (`missing`) included. */
  files: number;
  bytes: number;
  /** Files without a kept original, never sent (absent from entries of earlier versions). */
  missing?: number;
}

export interface PushJobEntry {
  id: string;
  listingId: string;
  plan: PushPlan;
  startedAt: string;
}

/**
 * How far a push got, recorded as each of its parts ends: its parts without their file lists (a part's
 * state, upload and counts say what the remote holds), and the totals so far.
 */
export interface PushProgress {
  parts: Omit<PushPart, 'files'>[];
  /** `unconfirmed` is absent from what earlier versions recorded. */
  totals: Omit<PushReport['totals'], 'unconfirmed'> & { unconfirmed?: number };
  remoteDocumentCount: number | null;
  remoteChunkCount: number | null;
  /**
   * The remote listing the parts went to, once learnt: a push that creates one learns it from its first
   * part's upload, after its plan was recorded. Absent from what earlier versions recorded.
   */
  remoteListingId?: string | null;
}

/** A push a stop interrupted: its plan, and how far it got when last recorded (null: no part ended). */
export interface InterruptedPush extends PushJobEntry {
  progress: PushProgress | null;
}

/** The journal of running pushes (src/core/jobJournal.ts). */
export type PushJobJournal = JobJournal<PushJobEntry, InterruptedPush, PushProgress>;

/** What of a report the journal records: it changes only when a part ends or gets its upload. */
export function pushProgress(report: PushReport): PushProgress {
  return {
    parts: report.parts.map(({ files: _files, ...part }) => part),
    totals: report.totals,
    remoteDocumentCount: report.remoteDocumentCount,
    remoteChunkCount: report.remoteChunkCount,
    remoteListingId: report.remoteListingId,
  };
}

/** The remote listing of an interrupted push: the one learnt while it ran, else the one it set out to. */
export function interruptedRemoteListing(plan: PushPlan, progress: PushProgress | null): string | null {
  return progress?.remoteListingId !== undefined ? progress.remoteListingId : plan.remoteListingId;
}

/** Whether a part has ended, for good or not: what it did is then known and kept. */
export const partEnded = (part: Pick<PushPart, 'state'>): boolean =>
  part.state === 'completed' || part.state === 'failed';

/** The parts' ends and uploads, and the remote listing: when this changes, the progress is recorded again. */
export function pushProgressKey(report: PushReport): string {
  const parts = report.parts.map((p) => `${partEnded(p) ? p.state : '-'}:${p.uploadId ?? ''}`).join(',');
  return `${report.remoteListingId ?? ''}|${parts}`;
}

/**
 * The totals of a push a stop interrupted, every file counted in exactly one outcome: the totals last
 * recorded count the parts that had ended (and the missing files); the files of a part that had not
 * ended are `unconfirmed` when the remote had taken its upload (it may have stored them), else
 * `not_stored`. With nothing recorded (no part had got an upload), every file but the missing ones was
 * not stored.
 */
export function interruptedTotals(plan: PushPlan, progress: PushProgress | null): PushReport['totals'] {
  const totals: PushReport['totals'] = progress
    ? { ...progress.totals, unconfirmed: progress.totals.unconfirmed ?? 0 }
    : {
        files: plan.files,
        bytes: plan.bytes,
        accepted: 0,
        unchanged: 0,
        rejected: 0,
        not_stored: 0,
        unconfirmed: 0,
        missing: plan.missing ?? 0,
      };
  for (const part of progress?.parts ?? []) {
    if (!partEnded(part) && part.uploadId !== null) totals.unconfirmed += part.fileCount;
  }
  const counted =
    totals.accepted +
    totals.unchanged +
    totals.rejected +
    totals.not_stored +
    totals.unconfirmed +
    totals.missing;
  totals.not_stored += Math.max(0, totals.files - counted);
  return totals;
}

/** What the creator reads of a part the stop cut short. */
export const PART_INTERRUPTED_MESSAGE =
  'The studio stopped before this part ended: the next push sends it again, or finds it done.';

/** What the creator reads about an interrupted push: what the remote may hold, and what to do now. */
export const PUSH_INTERRUPTED_MESSAGE =
  'The studio stopped before this push ended. The parts the service had completed stay there: push again to resume, and what the service already holds comes back unchanged.';
