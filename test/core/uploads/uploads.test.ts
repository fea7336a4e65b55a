import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../../src/core/ids';
import type { UploadRecord, UploadRepository } from '../../../src/core/uploads/uploads';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';
import { writeZip } from '../../helpers/zip';

const dir = tempDir();
let services: StudioServices;
let wallet: string;
beforeAll(() => {
  services = openServices(dir.path);
  wallet = services.wallets.defaultWallet().address;
});
afterAll(() => {
  services.close();
  dir.remove();
});
afterEach(() => vi.restoreAllMocks());

/** The received files of an upload, where the server puts them (`<dataDir>/tmp/<id>`). */
async function received(files: Record<string, string>): Promise<{ dir: string; zip: string }> {
  const uploadDir = join(dir.path, 'tmp', newId('upl', 12));
  mkdirSync(uploadDir, { recursive: true });
  const zip = await writeZip(join(uploadDir, '0-kb.zip'), files);
  return { dir: uploadDir, zip };
}

const FINAL_KEYS = ['bytesDone', 'bytesTotal', 'chunks', 'filesDone', 'filesTotal', 'stage'];

describe('UploadService: the progress a finished upload ends with', () => {
  it('ends a failed upload on the stage `failed`, with the counts it reached and no file under way', async () => {
    const broken = '%PDF-1.4\nnot a pdf at all';
    const { dir: uploadDir, zip } = await received({
      'a.md': '# Alpha\n\nRead without error.',
      'b.md': '# Beta\n\nRead without error too.',
      'c.pdf': broken,
    });
    const accepted = await services.uploads.accept({
      wallet,
      config: { chunking: 'recursive' },
      files: [{ path: zip, name: 'kb.zip' }],
      dir: uploadDir,
    });
    await services.uploads.idle();
    const failed = services.uploads.get(accepted.uploadId, wallet);
    expect(failed.status).toBe('failed');
    expect(failed.files.find((f) => f.source === 'c.pdf')).toMatchObject({ status: 'rejected' });
    // It read `embedding` (or another stage of the work) and the file then under way, as if still running.
    expect(failed.progress.stage).toBe('failed');
    expect(Object.keys(failed.progress).sort()).toEqual(FINAL_KEYS);
    expect(failed.progress).toMatchObject({ filesTotal: 3 });
    expect(failed.progress.filesDone).toBeGreaterThan(0);
    expect(failed.progress.bytesTotal).toBeGreaterThan(0);
  });

  it('ends an upload that failed before it started on `failed`, not `queued`', async () => {
    vi.spyOn(services.ingestion, 'run').mockRejectedValue(new Error('the disk went away'));
    const { dir: uploadDir, zip } = await received({ 'a.md': '# Alpha' });
    const accepted = await services.uploads.accept({
      wallet,
      config: { chunking: 'recursive' },
      files: [{ path: zip, name: 'kb.zip' }],
      dir: uploadDir,
    });
    expect(accepted.progress.stage).toBe('queued');
    await services.uploads.idle();
    const failed = services.uploads.get(accepted.uploadId, wallet);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'internal_error' } });
    expect(failed.progress).toEqual({
      stage: 'failed',
      filesDone: 0,
      filesTotal: 0,
      bytesDone: 0,
      bytesTotal: 0,
      chunks: 0,
    });
  });

  it('ends a completed upload on `done`', async () => {
    const { dir: uploadDir, zip } = await received({ 'a.md': '# Done\n\nStored.' });
    const accepted = await services.uploads.accept({
      wallet,
      config: { chunking: 'recursive' },
      files: [{ path: zip, name: 'done.zip' }],
      dir: uploadDir,
    });
    await services.uploads.idle();
    expect(services.uploads.get(accepted.uploadId, wallet)).toMatchObject({
      status: 'completed',
      progress: { stage: 'done', filesDone: 1, filesTotal: 1 },
    });
  });

  it('ends an upload a restart interrupted on `failed`, keeping its counts', () => {
    const repo = (services.uploads as unknown as { repo: UploadRepository }).repo;
    const listing = services.listings.create(
      { title: 'Interrupted', accessModel: 'one_time', price: 0 },
      wallet,
    );
    const at = new Date().toISOString();
    const record: UploadRecord = {
      uploadId: newId('upl'),
      listingId: listing.id,
      wallet,
      status: 'processing',
      config: { chunking: 'recursive', listing_id: listing.id },
      progress: {
        stage: 'embedding',
        file: 'guides/intro.md',
        filesDone: 25,
        filesTotal: 26,
        bytesDone: 1000,
        bytesTotal: 1200,
        chunks: 300,
      },
      files: [],
      documentCount: null,
      chunkCount: null,
      error: null,
      createdAt: at,
      updatedAt: at,
    };
    repo.insert(record);
    expect(services.uploads.recoverInterrupted()).toBe(1);
    expect(services.uploads.get(record.uploadId, wallet)).toMatchObject({
      status: 'failed',
      error: { message: expect.stringContaining('nothing was stored') },
      progress: {
        stage: 'failed',
        filesDone: 25,
        filesTotal: 26,
        bytesDone: 1000,
        bytesTotal: 1200,
        chunks: 300,
      },
    });
    expect(services.uploads.get(record.uploadId, wallet).progress).not.toHaveProperty('file');
  });
});
