import { describe, expect, it } from 'vitest';
import { IngestJobs } from '../../../src/core/ingest/jobs';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';

const fsError = (code: string) =>
  Object.assign(new Error(`${code}: failed, write`), { code, syscall: 'write' });

describe('IngestJobs', () => {
  it('reports a full disk as such, naming the data directory the upload was received in', async () => {
    const jobs = new IngestJobs(() => Promise.reject(fsError('ENOSPC')));
    const { id } = jobs.start({
      listingId: 'lst_1',
      inputs: [{ path: '/srv/kb-data/tmp/studio_abc/0-docs.zip', name: 'docs.zip' }],
      limits: STUDIO_LIMITS,
    });
    const done = await jobs.settled(id);
    expect(done.state).toBe('failed');
    expect(done.error?.code).toBe('internal_error');
    expect(done.error?.message).toMatch(
      /^The disk is full: no space is left for the data directory \/srv\/kb-data\./,
    );
  });

  it('reports a read-only data directory, naming the one it was given', async () => {
    const jobs = new IngestJobs(() => Promise.reject(fsError('EROFS')));
    const { id } = jobs.start({
      listingId: 'lst_1',
      inputs: [{ path: '/elsewhere/x.md' }],
      limits: STUDIO_LIMITS,
      dataDir: '/var/kb',
    });
    const done = await jobs.settled(id);
    expect(done.error?.message).toMatch(/^The data directory \/var\/kb cannot be written \(EROFS/);
  });

  it('keeps other failures as they were', async () => {
    const jobs = new IngestJobs(() => Promise.reject(new Error('boom')));
    const { id } = jobs.start({ listingId: 'lst_1', inputs: [], limits: STUDIO_LIMITS });
    expect((await jobs.settled(id)).error).toEqual({
      code: 'internal_error',
      message: 'The ingestion failed: boom',
    });
  });

  it('reports a job ended only once its received files are cleaned up', async () => {
    for (const run of [() => Promise.reject(new Error('boom')), () => Promise.resolve({} as never)]) {
      let release!: () => void;
      const removed = new Promise<void>((resolve) => (release = resolve));
      let cleaning = false;
      const jobs = new IngestJobs(run);
      const { id } = jobs.start({
        listingId: 'lst_1',
        inputs: [],
        limits: STUDIO_LIMITS,
        cleanup: () => {
          cleaning = true;
          return removed;
        },
      });
      const settled = jobs.settled(id);
      await expect.poll(() => cleaning).toBe(true);
      expect(jobs.get(id).state).toBe('running');
      release();
      expect((await settled).state).toMatch(/^(failed|done)$/);
      expect(jobs.get(id).finishedAt).toEqual(expect.any(String));
    }
  });
});
