import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PushJobs } from '../../../src/core/push/jobs';
import { recoverInterruptedJobs } from '../../../src/db/repositories/jobJournal';
import { openServices, type StudioServices } from '../../../src/db/services';
import type { PushPart, PushReport } from '../../../src/shared/push';
import { tempDir } from '../../helpers/studio';

describe("PushJobs: what the journal keeps of a push's parts", () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let listingId: string;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(dir.path);
    listingId = services.listings.create(
      { title: 'Push journal', accessModel: 'one_time', price: 0 },
      services.wallets.defaultWallet().address,
    ).id;
  });

  afterEach(() => {
    services.close();
    dir.remove();
  });

  const part = (index: number, change: Partial<PushPart> = {}): PushPart => ({
    index,
    state: 'waiting',
    fileCount: 2,
    bytes: 2000,
    archiveBytes: null,
    chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
    packing: { filesDone: 0, bytesDone: 0 },
    sending: { loaded: 0, total: 0 },
    remote: null,
    attempts: 0,
    uploadId: null,
    error: null,
    files: [
      { source: `doc-${index}a.md`, format: 'markdown', bytes: 1000, status: 'pending', chunks: 0 },
      { source: `doc-${index}b.md`, format: 'markdown', bytes: 1000, status: 'pending', chunks: 0 },
    ],
    ...change,
  });
  const report = (parts: PushPart[], change: Partial<PushReport> = {}): PushReport => ({
    listingId,
    target: 'https://kb.example/v1',
    remoteListingId: 'lst_remote',
    state: 'running',
    parts,
    missing: [],
    totals: {
      files: 4,
      bytes: 4000,
      accepted: 0,
      unchanged: 0,
      rejected: 0,
      not_stored: 0,
      unconfirmed: 0,
      missing: 0,
    },
    remoteDocumentCount: null,
    remoteChunkCount: null,
    error: null,
    startedAt: '2026-11-28T12:00:00.000Z',
    finishedAt: null,
    ...change,
  });

  it('records the parts as each one ends or gets its upload, and reports them after a stop', async () => {
    const progressed = vi.spyOn(services.pushJournal, 'progressed');
    const sent = { archiveBytes: 1500, sending: { loaded: 1500, total: 1500 }, attempts: 1 };
    let finish!: (r: PushReport) => void;
    const jobs = new PushJobs(services.pushJournal);
    const job = await jobs.start(async (_signal, onUpdate) => {
      onUpdate(report([part(1), part(2)]));
      // Progress ticks while part 1 is sent: nothing recorded.
      for (const loaded of [100, 700, 1500]) {
        onUpdate(report([part(1, { state: 'sending', sending: { loaded, total: 1500 } }), part(2)]));
      }
      onUpdate(report([part(1, { ...sent, state: 'processing', uploadId: 'upl_1' }), part(2)]));
      const done = part(1, { ...sent, state: 'completed', uploadId: 'upl_1', files: [] });
      onUpdate(
        report([done, part(2, { ...sent, state: 'processing', uploadId: 'upl_2' })], {
          totals: {
            files: 4,
            bytes: 4000,
            accepted: 2,
            unchanged: 0,
            rejected: 0,
            not_stored: 0,
            unconfirmed: 0,
            missing: 0,
          },
          remoteDocumentCount: 2,
          remoteChunkCount: 9,
        }),
      );
      return new Promise<PushReport>((resolve) => (finish = resolve));
    });
    await vi.waitFor(() => expect(jobs.get(job.id).remoteChunkCount).toBe(9));
    // Part 1 got its upload, part 1 completed with part 2's upload: two writes, not one per tick.
    expect(progressed).toHaveBeenCalledTimes(2);

    // The next start of the studio, while this push was still running (as after a kill).
    recoverInterruptedJobs(services.db);
    const found = new PushJobs(services.pushJournal).get(job.id);
    expect(found.state).toBe('interrupted');
    expect(found.parts.map((p) => [p.index, p.state, p.uploadId, p.error?.code ?? null])).toEqual([
      [1, 'completed', 'upl_1', null],
      [2, 'failed', 'upl_2', 'interrupted'],
    ]);
    expect(found.parts[1]!.error!.message).toBe(
      'The studio stopped before this part ended: the next push sends it again, or finds it done.',
    );
    // File lists are not kept; the counts are.
    expect(found.parts.every((p) => p.files.length === 0)).toBe(true);
    expect(found.totals.accepted).toBe(2);
    // Part 2's upload was taken by the remote, its end never seen: its files may be stored there.
    expect(found.totals).toMatchObject({ files: 4, accepted: 2, unconfirmed: 2, not_stored: 0 });
    expect([found.remoteDocumentCount, found.remoteChunkCount]).toEqual([2, 9]);

    finish(report([], { state: 'completed', finishedAt: '2026-11-28T12:05:00.000Z' }));
    await jobs.settled(job.id);
    // The final report is not recorded as progress: the job's row is removed instead.
    expect(progressed).toHaveBeenCalledTimes(2);
  });

  it('reports a push no part of which had ended with its plan and no parts, every file not stored', async () => {
    const jobs = new PushJobs(services.pushJournal);
    const missing = {
      source: 'old.md',
      format: 'markdown',
      bytes: 10,
      status: 'missing' as const,
      chunks: 0,
    };
    const job = await jobs.start(async (_signal, onUpdate) => {
      onUpdate(report([part(1), part(2)], { missing: [missing] }));
      return new Promise<PushReport>(() => undefined);
    });
    recoverInterruptedJobs(services.db);
    const found = new PushJobs(services.pushJournal).get(job.id);
    expect(found.parts).toEqual([]);
    // 4 files in parts that never got an upload, and 1 without its original: each counted once.
    expect(found.totals).toEqual({
      files: 5,
      bytes: 4000,
      accepted: 0,
      unchanged: 0,
      rejected: 0,
      not_stored: 4,
      unconfirmed: 0,
      missing: 1,
    });
  });

  it('names the remote listing a push created once its first part was taken, though a stop cut it short', async () => {
    const jobs = new PushJobs(services.pushJournal);
    const job = await jobs.start(async (_signal, onUpdate) => {
      // No remote listing remembered: the first upload creates one and names it.
      onUpdate(report([part(1), part(2)], { remoteListingId: null }));
      onUpdate(
        report([part(1, { state: 'sending', uploadId: 'upl_1', attempts: 1 }), part(2)], {
          remoteListingId: 'lst_created',
        }),
      );
      return new Promise<PushReport>(() => undefined);
    });
    recoverInterruptedJobs(services.db);
    const found = new PushJobs(services.pushJournal).get(job.id);
    expect(found.state).toBe('interrupted');
    expect(found.remoteListingId).toBe('lst_created');
    expect(found.totals).toMatchObject({ files: 4, unconfirmed: 2, not_stored: 2 });
  });

  it('counts the files of the part a stop cut short: 8 files in 3 parts, the third upload hanging', async () => {
    const three = (index: number, change: Partial<PushPart> = {}): PushPart => {
      const base = part(index, change);
      const count = index === 3 ? 2 : 3;
      const files = Array.from({ length: count }, (_, i) => ({
        source: `doc-${index}-${i}.md`,
        format: 'markdown',
        bytes: 100,
        status: change.state === 'completed' ? ('unchanged' as const) : ('pending' as const),
        chunks: 0,
      }));
      return { ...base, fileCount: count, bytes: count * 100, files };
    };
    const totals = (unchanged: number) => ({
      files: 8,
      bytes: 800,
      accepted: 0,
      unchanged,
      rejected: 0,
      not_stored: 0,
      unconfirmed: 0,
      missing: 0,
    });
    const done = { state: 'completed' as const, attempts: 1, archiveBytes: 300 };
    const jobs = new PushJobs(services.pushJournal);
    const job = await jobs.start(async (_signal, onUpdate) => {
      onUpdate(report([three(1), three(2), three(3)], { totals: totals(0) }));
      onUpdate(report([three(1, { ...done, uploadId: 'upl_1' }), three(2), three(3)], { totals: totals(3) }));
      onUpdate(
        report(
          [three(1, { ...done, uploadId: 'upl_1' }), three(2, { ...done, uploadId: 'upl_2' }), three(3)],
          {
            totals: totals(6),
          },
        ),
      );
      // Part 3 is being sent; its upload never answers.
      onUpdate(
        report(
          [
            three(1, { ...done, uploadId: 'upl_1' }),
            three(2, { ...done, uploadId: 'upl_2' }),
            three(3, { state: 'sending', archiveBytes: 200, attempts: 1 }),
          ],
          { totals: totals(6) },
        ),
      );
      return new Promise<PushReport>(() => undefined);
    });
    recoverInterruptedJobs(services.db);
    const found = new PushJobs(services.pushJournal).get(job.id);
    expect(found.state).toBe('interrupted');
    expect(found.parts.map((p) => [p.index, p.state, p.error?.code ?? null])).toEqual([
      [1, 'completed', null],
      [2, 'completed', null],
      [3, 'failed', 'interrupted'],
    ]);
    expect(found.totals).toEqual({ ...totals(6), not_stored: 2 });
    const t = found.totals;
    expect(t.accepted + t.unchanged + t.rejected + t.not_stored + t.unconfirmed + t.missing).toBe(t.files);
  });
});
