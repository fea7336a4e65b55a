import { describe, expect, it } from 'vitest';
import { afterJobShown, lostNoticeShown, type LostJob } from '../../../src/renderer/src/lib/lostJob';

describe('a job lost, then reported interrupted (Ingest and Publish)', () => {
  it('says it lost track only until the studio shows that same job again', () => {
    // The stream was cut: the page says it lost track of job_1.
    let lost: LostJob = { id: 'job_1', reported: false };
    expect(lostNoticeShown(true, lost)).toBe(true);
    // Another job shown (an older listing's) changes nothing.
    lost = afterJobShown(lost, { id: 'job_0' })!;
    expect(lostNoticeShown(true, lost)).toBe(true);
    // The studio, started again, reports job_1 interrupted: its report alone is shown, and still not the
    // lost notice once that report is dismissed.
    lost = afterJobShown(lost, { id: 'job_1' })!;
    expect(lostNoticeShown(true, lost)).toBe(false);
    expect(afterJobShown(lost, { id: 'job_1' })).toBe(lost);
  });

  it('hides "Lost track of the push" once the push the studio lost is shown interrupted', () => {
    // A push's report, as listPushJobs gives it after the restart: only its id decides.
    const interrupted = { id: 'push_7', state: 'interrupted', listingId: 'lst_1' };
    const lost = afterJobShown({ id: 'push_7', reported: false }, interrupted);
    expect(lostNoticeShown(true, lost)).toBe(false);
  });

  it('is no lost notice when nothing was lost', () => {
    expect(lostNoticeShown(false, undefined)).toBe(false);
    expect(afterJobShown(undefined, { id: 'job_1' })).toBeUndefined();
  });
});
