/**
 * The job (an ingestion, a push) a page lost track of (its stream cut, the studio stopped), and whether
 * the studio has since shown that same job again: as interrupted (its report says what was stored and
 * what to do), or still running (followed again). Once it has, "Lost track of …" is out of date.
 */
export interface LostJob {
  id: string;
  reported: boolean;
}

/** The lost job once `found` is shown: reported when it is that same job. */
export function afterJobShown(lost: LostJob | undefined, found: { id: string }): LostJob | undefined {
  return lost && lost.id === found.id && !lost.reported ? { ...lost, reported: true } : lost;
}

/**
 * Whether the page says it lost track of a job: not once the studio showed that job again, whose report
 * (or progress) says what happened to it. Both at once told the creator to start the job again and,
 * beside it, that it was interrupted and what it stored.
 */
export const lostNoticeShown = (lost: boolean, lostJob: LostJob | undefined): boolean =>
  lost && !lostJob?.reported;
