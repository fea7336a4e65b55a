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
  files: number;
  bytes: number;
}

export interface PushJobEntry {
  id: string;
  listingId: string;
  plan: PushPlan;
  startedAt: string;
}

/** The journal of running pushes (src/core/jobJournal.ts). */
export type PushJobJournal = JobJournal<PushJobEntry>;

/** What the creator reads about an interrupted push: what the remote may hold, and what to do now. */
export const PUSH_INTERRUPTED_MESSAGE =
  'The studio stopped before this push ended. The parts the service had completed stay there: push again to resume, and what the service already holds comes back unchanged.';
