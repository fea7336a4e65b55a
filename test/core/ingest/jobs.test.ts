import { afterEach, describe, expect, it, vi } from 'vitest';
import { IngestJobs } from '../../../src/core/ingest/jobs';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import type { IngestProgress, IngestResult, IngestStage } from '../../../src/core/ingest/pipeline';
import type { IngestCommand } from '../../../src/core/ingest/service';

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

  describe('progress of many files', () => {
    afterEach(() => vi.restoreAllMocks());

    /** A runner that reports `files` files through the pipeline's stages, one after another. */
    const reporting =
      (files: number, seen?: (file: number) => void) =>
      async ({ onProgress }: IngestCommand): Promise<IngestResult> => {
        const report = (stage: IngestStage, file?: string) =>
          onProgress?.({ stage, filesDone: 0, filesTotal: files, file } as IngestProgress);
        // The job has started, and its id is known, before the first file.
        await new Promise((resolve) => setImmediate(resolve));
        for (let i = 0; i < files; i++) {
          for (const stage of ['reading', 'parsing', 'chunking', 'embedding'] as const)
            report(stage, `f${i}.md`);
          seen?.(i);
          if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
        }
        report('storing');
        return { documents: [], chunkCount: 0 } as unknown as IngestResult;
      };

    it('marks the files before the one reported processed, then all done', async () => {
      let id = '';
      const during: string[][] = [];
      const jobs: IngestJobs = new IngestJobs(
        reporting(4, (i) => {
          if (i > 0) during.push(jobs.get(id).files.map((f) => `${f.source}:${f.stage}`));
        }),
      );
      id = jobs.start({ listingId: 'lst_1', inputs: [], limits: STUDIO_LIMITS }).id;
      const done = await jobs.settled(id);
      expect(during).toEqual([
        ['f0.md:processed', 'f1.md:embedding'],
        ['f0.md:processed', 'f1.md:processed', 'f2.md:embedding'],
        ['f0.md:processed', 'f1.md:processed', 'f2.md:processed', 'f3.md:embedding'],
      ]);
      expect(done.files.map((f) => f.stage)).toEqual(['done', 'done', 'done', 'done']);
    });

    it('copies no snapshot per event for a follower: it reads the live one, and copies are its own', async () => {
      const clones = vi.spyOn(globalThis, 'structuredClone');
      const jobs = new IngestJobs(reporting(2_000));
      const { id } = jobs.start({ listingId: 'lst_1', inputs: [], limits: STUDIO_LIMITS });
      let events = 0;
      let working = 0;
      jobs.subscribe(id, (event) => {
        events++;
        if (event.type === 'progress' && event.job.files.at(-1)?.stage !== 'processed') working++;
      });
      const done = await jobs.settled(id);
      expect(events).toBe(2_000 * 4 + 2);
      expect(working).toBe(2_000 * 4);
      // get() at the start and settled() at the end: a copy per event was 8,002 copies of up to 2,000 files.
      expect(clones.mock.calls.length).toBeLessThanOrEqual(2);
      done.files[0]!.stage = 'reading';
      expect(jobs.get(id).files[0]!.stage).toBe('done');
    });
  });
});
