import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { interruptionMessage, type IngestJobEntry } from '../../../src/core/ingest/jobJournal';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

describe('the journal of studio jobs (studio_jobs): ingestions', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let listingId: string;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(dir.path);
    listingId = services.listings.create(
      { title: 'Journal', accessModel: 'one_time', price: 0 },
      services.wallets.defaultWallet().address,
    ).id;
  });

  afterEach(() => {
    vi.useRealTimers();
    services.close();
    dir.remove();
  });

  const entry = (id: string, startedAt = '2026-11-28T10:00:00.000Z'): IngestJobEntry => ({
    id,
    listingId,
    kind: 'ingest',
    sources: ['handbook/leave.md', 'policies.zip'],
    startedAt,
  });

  /** The data directory opened again, as the next start of the studio does after a stop. */
  const restart = () => {
    services.close();
    services = openServices(dir.path);
    return services.ingestJournal;
  };

  it('reports after a restart the jobs still running when the studio stopped, and only those', () => {
    const journal = services.ingestJournal;
    journal.opened(entry('job_ended'));
    journal.opened(entry('job_cut', '2026-11-28T10:05:00.000Z'));
    journal.closed('job_ended');
    // Running in this process: not interrupted.
    expect(journal.interrupted()).toEqual([]);

    const after = restart();
    const [cut, ...rest] = after.interrupted(listingId);
    expect(rest).toEqual([]);
    expect(cut).toEqual({ ...entry('job_cut', '2026-11-28T10:05:00.000Z'), changedDocuments: 0 });
    expect(after.interrupted('lst_other')).toEqual([]);
    expect(interruptionMessage(cut!)).toBe(
      'The studio stopped before this ingestion ended, so none of its files were stored (an ingestion stores them all at its end). Ingest them again.',
    );

    // Reported until dismissed, across restarts.
    expect(restart().interrupted()).toHaveLength(1);
    expect(services.ingestJournal.dismiss('job_cut')).toBe(true);
    expect(services.ingestJournal.dismiss('job_cut')).toBe(false);
    expect(restart().interrupted()).toEqual([]);
  });

  it("counts the listing's documents written after an interrupted job started", async () => {
    const startedAt = new Date(Date.now() - 1000).toISOString();
    services.ingestJournal.opened({ ...entry('job_cut', startedAt), kind: 'reingest', sources: ['a.md'] });
    // A real ingestion commits after the job started (the job's own commit just before the stop, say).
    const file = join(dir.path, 'a.md');
    writeFileSync(file, '# Leave\n\nEmployees get twenty days of paid leave a year.\n');
    await services.ingestion.run({
      listingId,
      inputs: [{ path: file, name: 'a.md' }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });

    const [cut] = restart().interrupted();
    expect(cut).toMatchObject({ id: 'job_cut', kind: 'reingest', changedDocuments: 1 });
    expect(interruptionMessage(cut!)).toBe(
      "The studio stopped before the re-ingestion of 'a.md' ended. 1 document of this listing changed after it started, so it may have stored its files just before the stop. Check the listing's documents, then ingest again what is missing: files already stored come back unchanged.",
    );
  });

  it("forgets a listing's interrupted jobs at once (another ingestion into it completed)", () => {
    services.ingestJournal.opened(entry('job_a'));
    services.ingestJournal.opened({
      ...entry('job_b'),
      listingId: services.listings.create(
        { title: 'Other', accessModel: 'one_time', price: 0 },
        services.wallets.defaultWallet().address,
      ).id,
    });
    const journal = restart();
    journal.dismissListing(listingId);
    expect(journal.interrupted().map((j) => j.id)).toEqual(['job_b']);
  });

  it('never waits for a write lock another connection holds, and removes an ended job once it is free', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const journal = services.ingestJournal;
    journal.opened(entry('job_1'));
    // A commit on its worker thread holds the lock like this connection, for minutes in a large import.
    const other = new Database(services.db.name);
    other.exec('BEGIN IMMEDIATE');
    try {
      // Waiting would have failed after the connection's 5 s busy timeout (SQLITE_BUSY thrown).
      journal.opened(entry('job_2'));
      journal.closed('job_1');
    } finally {
      other.exec('COMMIT');
    }
    const rows = () => services.db.prepare(`SELECT id FROM studio_jobs ORDER BY id`).pluck().all();
    // job_2 was not written (it would not be reported), job_1 could not be removed yet.
    expect(rows()).toEqual(['job_1']);
    vi.advanceTimersByTime(2_000);
    expect(rows()).toEqual([]);
    other.close();
  });

  it('leaves an ended job on disk when the database closed under it, and nothing throws', () => {
    const journal = services.ingestJournal;
    journal.opened(entry('job_1'));
    services.close();
    expect(() => journal.closed('job_1')).not.toThrow();
    expect(() => journal.opened(entry('job_2'))).not.toThrow();
    services = openServices(dir.path);
    expect(services.ingestJournal.interrupted().map((j) => j.id)).toEqual(['job_1']);
  });

  it('keeps pushes apart from ingestions, each reported by its own journal', () => {
    const plan = {
      target: 'https://kb.example/v1',
      remoteListingId: null,
      parts: 2,
      files: 1200,
      bytes: 5e8,
    };
    services.ingestJournal.opened(entry('job_ingest'));
    services.pushJournal.opened({ id: 'push_1', listingId, startedAt: '2026-11-28T11:00:00.000Z', plan });
    services.pushJournal.opened({ id: 'push_2', listingId, startedAt: '2026-11-28T11:05:00.000Z', plan });
    services.pushJournal.closed('push_2');

    restart();
    expect(services.pushJournal.interrupted(listingId)).toEqual([
      { id: 'push_1', listingId, startedAt: '2026-11-28T11:00:00.000Z', plan, progress: null },
    ]);
    expect(services.ingestJournal.interrupted().map((j) => j.id)).toEqual(['job_ingest']);
    // One journal cannot dismiss the other's reports.
    expect(services.ingestJournal.dismiss('push_1')).toBe(false);
    services.ingestJournal.dismissListing(listingId);
    expect(services.pushJournal.interrupted().map((j) => j.id)).toEqual(['push_1']);
    services.pushJournal.dismissListing(listingId);
    expect(services.pushJournal.interrupted()).toEqual([]);
  });

  it("reports an interrupted push's parts as last recorded, and records nothing for an ended one", () => {
    const plan = {
      target: 'https://kb.example/v1',
      remoteListingId: 'lst_r',
      parts: 2,
      files: 3,
      bytes: 300,
    };
    const part = (index: number, state: 'completed' | 'processing', uploadId: string) => ({
      index,
      state,
      fileCount: 1,
      bytes: 100,
      archiveBytes: 90,
      chunking: { strategy: 'recursive', chunkSize: 512, chunkOverlap: 64 },
      packing: { filesDone: 1, bytesDone: 100 },
      sending: { loaded: 90, total: 90 },
      remote: null,
      attempts: 1,
      uploadId,
      error: null,
    });
    const totals = {
      files: 3,
      bytes: 300,
      accepted: 1,
      unchanged: 0,
      rejected: 0,
      not_stored: 0,
      missing: 0,
    };
    const first = {
      parts: [part(1, 'processing', 'upl_1')],
      totals,
      remoteDocumentCount: null,
      remoteChunkCount: null,
    };
    const later = {
      parts: [part(1, 'completed', 'upl_1'), part(2, 'processing', 'upl_2')],
      totals,
      remoteDocumentCount: 1,
      remoteChunkCount: 4,
    };
    const journal = services.pushJournal;
    journal.opened({ id: 'push_cut', listingId, startedAt: '2026-11-28T12:00:00.000Z', plan });
    journal.opened({ id: 'push_ended', listingId, startedAt: '2026-11-28T12:01:00.000Z', plan });
    journal.progressed('push_cut', first);
    journal.progressed('push_cut', later);
    journal.closed('push_ended');
    journal.progressed('push_ended', later);
    // A job with no row (its entry was skipped) records nothing, and nothing throws.
    expect(() => journal.progressed('push_unknown', later)).not.toThrow();

    restart();
    expect(services.pushJournal.interrupted(listingId)).toEqual([
      { id: 'push_cut', listingId, startedAt: '2026-11-28T12:00:00.000Z', plan, progress: later },
    ]);
    // Progress of an interrupted job (found on disk) is not taken: only running ones move.
    services.pushJournal.progressed('push_cut', first);
    expect(services.pushJournal.interrupted(listingId)[0]!.progress).toEqual(later);
  });

  it('deletes the reports of a deleted listing with it', () => {
    services.ingestJournal.opened(entry('job_1'));
    const journal = restart();
    services.listings.delete(listingId);
    expect(journal.interrupted()).toEqual([]);
  });
});
