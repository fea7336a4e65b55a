import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { IngestProgress } from '../../../src/core/ingest/pipeline';
import type { UploadRecord } from '../../../src/core/uploads/uploads';
import { SqliteUploadRepository } from '../../../src/db/repositories/uploads';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

const progress = (stage: IngestProgress['stage'], chunks: number): IngestProgress => ({
  stage,
  filesDone: 0,
  filesTotal: 1,
  bytesDone: 0,
  bytesTotal: 100,
  chunks,
});

describe('SqliteUploadRepository.tryUpdate', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let repo: SqliteUploadRepository;
  let record: UploadRecord;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(dir.path);
    const wallet = services.wallets.defaultWallet().address;
    const listingId = services.listings.create({ title: 'KB', accessModel: 'one_time', price: 0 }, wallet).id;
    repo = new SqliteUploadRepository(services.db);
    record = {
      uploadId: 'upl_progress',
      listingId,
      wallet,
      status: 'processing',
      config: {},
      progress: progress('reading', 0),
      files: [],
      documentCount: null,
      chunkCount: null,
      error: null,
      createdAt: '2026-11-25T00:00:00.000Z',
      updatedAt: '2026-11-25T00:00:00.000Z',
    };
    repo.insert(record);
  });

  afterEach(() => {
    services.close();
    dir.remove();
  });

  it('writes, and does not wait while another connection holds the write lock', () => {
    expect(
      repo.tryUpdate(record.uploadId, {
        progress: progress('embedding', 5),
        updatedAt: '2026-11-25T00:00:01.000Z',
      }),
    ).toBe(true);
    expect(repo.findById(record.uploadId)).toMatchObject({
      progress: progress('embedding', 5),
      updatedAt: '2026-11-25T00:00:01.000Z',
    });

    // A commit on its worker thread holds the lock like this connection.
    const other = new Database(services.db.name);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = performance.now();
      expect(
        repo.tryUpdate(record.uploadId, {
          progress: progress('storing', 9),
          updatedAt: '2026-11-25T00:00:02.000Z',
        }),
      ).toBe(false);
      // Not the connection's busy timeout (5 s): refused at once.
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(repo.findById(record.uploadId)!.progress).toEqual(progress('embedding', 5));
    // The connection waits for other writers as before.
    expect(services.db.pragma('busy_timeout', { simple: true })).toBe(5_000);
    expect(
      repo.tryUpdate(record.uploadId, {
        progress: progress('done', 9),
        updatedAt: '2026-11-25T00:00:03.000Z',
      }),
    ).toBe(true);
    expect(repo.findById(record.uploadId)!.progress).toEqual(progress('done', 9));
  });

  it("never writes back what it read over a completion another connection's commit made meanwhile", () => {
    // The commit worker completes an upload on its own connection (commitWorker.mjs); here it tries to
    // do so between this update's read of the row and its write.
    const other = new Database(services.db.name);
    other.pragma('busy_timeout = 0');
    const findById = repo.findById.bind(repo);
    let attempt: unknown = 'not tried';
    const spy = vi.spyOn(repo, 'findById').mockImplementation((id) => {
      const read = findById(id);
      try {
        other.prepare(`UPDATE uploads SET status = 'completed' WHERE id = ?`).run(id);
        attempt = 'written';
      } catch (err) {
        attempt = (err as { code?: string }).code;
      }
      return read;
    });
    try {
      expect(repo.tryUpdate(record.uploadId, { progress: progress('done', 4) })).toBe(true);
    } finally {
      spy.mockRestore();
    }
    // The row was held from the read to the write: the completion had to wait for it.
    expect(attempt).toBe('SQLITE_BUSY');
    other.prepare(`UPDATE uploads SET status = 'completed' WHERE id = ?`).run(record.uploadId);
    other.close();
    expect(repo.findById(record.uploadId)).toMatchObject({
      status: 'completed',
      progress: progress('done', 4),
    });
  });

  it('marks an upload a restart interrupted as failed, saying whether its documents were stored', () => {
    const stages = { upl_progress: 'embedding', upl_stored: 'done', upl_storing: 'storing' } as const;
    repo.insert({ ...record, uploadId: 'upl_stored', progress: progress('done', 8) });
    repo.insert({ ...record, uploadId: 'upl_storing', progress: progress('storing', 8) });
    repo.update('upl_progress', { progress: progress(stages.upl_progress, 3) });
    services.close();
    // Opening the data directory again recovers what no live process is working on.
    services = openServices(dir.path);
    repo = new SqliteUploadRepository(services.db);
    const message = (id: string) => repo.findById(id)?.error?.message;
    for (const id of Object.keys(stages)) expect(repo.findById(id)?.status).toBe('failed');
    expect(message('upl_progress')).toMatch(/interrupted by a restart.*nothing was stored/);
    // Committing, not committed: the transaction rolled back with the process.
    expect(message('upl_storing')).toMatch(/interrupted by a restart.*nothing was stored/);
    expect(message('upl_stored')).toMatch(/interrupted by a restart.*after its documents were stored/);
  });
});
