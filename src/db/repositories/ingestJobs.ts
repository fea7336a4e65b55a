import type { IngestJobEntry, IngestJobJournal, InterruptedIngestion } from '../../core/ingest/jobJournal';
import type { Db } from '../open';
import { writeWithoutWaiting } from '../withoutWaiting';

interface Row {
  id: string;
  listingId: string;
  kind: IngestJobEntry['kind'];
  sources: string;
  startedAt: string;
  changedDocuments: number;
}

const SELECT_INTERRUPTED = `SELECT id, listing_id AS listingId, kind, sources, started_at AS startedAt,
  changed_documents AS changedDocuments FROM ingest_jobs WHERE state = 'interrupted'`;

/** How often a journal write the database's lock refused is tried again. */
const RETRY_MS = 2_000;

/**
 * The journal of studio ingestions in the `ingest_jobs` table (migration 8). Its writes never wait for
 * the write lock, which a commit on another connection can hold for minutes: a skipped entry only means
 * that job would not be reported if a stop cut it short, and a skipped removal is retried, so a job
 * that ended is not reported interrupted after the next restart (unless the studio stops first).
 */
export class SqliteIngestJobJournal implements IngestJobJournal {
  private readonly stmts;
  /** Ended jobs whose rows the write lock kept us from removing yet. */
  private readonly unclosed = new Set<string>();
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare(`INSERT OR IGNORE INTO ingest_jobs (id, listing_id, kind, state, sources, started_at)
        VALUES (@id, @listingId, @kind, 'running', @sources, @startedAt)`),
      remove: db.prepare(`DELETE FROM ingest_jobs WHERE id = ?`),
      removeInterrupted: db.prepare(`DELETE FROM ingest_jobs WHERE id = ? AND state = 'interrupted'`),
      removeListing: db.prepare(`DELETE FROM ingest_jobs WHERE listing_id = ? AND state = 'interrupted'`),
      all: db.prepare(`${SELECT_INTERRUPTED} ORDER BY started_at DESC, id`),
      ofListing: db.prepare(`${SELECT_INTERRUPTED} AND listing_id = ? ORDER BY started_at DESC, id`),
    };
  }

  /**
   * Turns the jobs left running by an earlier process into interrupted ones, counting the documents of
   * their listing written since each started. Only for a data directory no live process uses (another
   * one may be running those jobs). Returns how many it found.
   */
  recoverInterrupted(): number {
    return this.db
      .prepare(
        `UPDATE ingest_jobs SET state = 'interrupted', changed_documents = (
           SELECT count(*) FROM documents d
           WHERE d.listing_id = ingest_jobs.listing_id AND d.updated_at >= ingest_jobs.started_at)
         WHERE state = 'running'`,
      )
      .run().changes;
  }

  opened(entry: IngestJobEntry): void {
    if (!this.db.open) return;
    this.flush();
    writeWithoutWaiting(this.db, () =>
      this.stmts.insert.run({ ...entry, sources: JSON.stringify(entry.sources) }),
    );
  }

  closed(id: string): void {
    this.unclosed.add(id);
    this.flush();
  }

  interrupted(listingId?: string): InterruptedIngestion[] {
    const rows = (listingId ? this.stmts.ofListing.all(listingId) : this.stmts.all.all()) as Row[];
    return rows.map((r) => ({ ...r, sources: JSON.parse(r.sources) as string[] }));
  }

  dismiss(id: string): boolean {
    return this.stmts.removeInterrupted.run(id).changes > 0;
  }

  dismissListing(listingId: string): void {
    if (!this.db.open) return;
    writeWithoutWaiting(this.db, () => this.stmts.removeListing.run(listingId));
  }

  /** Stops retrying (the database is about to close); what is left is reported after the restart. */
  close(): void {
    clearTimeout(this.retry);
    this.retry = undefined;
  }

  private flush(): void {
    // Closed under a running job (the studio shutting down): the job stays on disk, reported interrupted.
    if (!this.db.open) return;
    for (const id of this.unclosed) {
      if (!writeWithoutWaiting(this.db, () => this.stmts.remove.run(id))) break;
      this.unclosed.delete(id);
    }
    if (this.unclosed.size > 0 && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.flush();
      }, RETRY_MS);
      this.retry.unref();
    }
  }
}
