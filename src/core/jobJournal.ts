/**
 * What the studio keeps on disk of each of its jobs (ingestions, pushes) while it runs, so that one a
 * stop cut short (a kill, a crash, the app closed) is reported after the restart instead of vanishing
 * with the server's memory. Writes are best effort: a job runs even when its entry could not be written
 * (another connection held the database's write lock).
 */
export interface JobJournal<Entry, Interrupted = Entry, Progress = never> {
  /** Records a job that has started. */
  opened(entry: Entry): void;
  /**
   * Records how far a running job has got (its sort says what that is), replacing what was recorded
   * before; reported with the job if a stop interrupts it.
   */
  progressed(id: string, progress: Progress): void;
  /** Forgets a job that has ended, whatever its outcome (it is reported from memory until a restart). */
  closed(id: string): void;
  /** Jobs a stop interrupted (found when the studio started), newest first. */
  interrupted(listingId?: string): Interrupted[];
  /** Forgets an interrupted job's report; false when there is none with that id. */
  dismiss(id: string): boolean;
  /** Forgets the interrupted jobs of a listing (another job of the same sort into it has completed since). */
  dismissListing(listingId: string): void;
}
