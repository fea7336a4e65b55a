import type { IngestJobEntry, IngestJobJournal, InterruptedIngestion } from '../../core/ingest/jobJournal';
import type {
  InterruptedPush,
  PushJobEntry,
  PushJobJournal,
  PushPlan,
  PushProgress,
} from '../../core/push/jobJournal';
import type { Db } from '../open';
import { writeWithoutWaiting } from '../withoutWaiting';

type Kind = 'ingest' | 'reingest' | 'push';

interface Row {
  id: string;
  listingId: string;
  kind: Kind;
  given: string;
  startedAt: string;
  /** How far the job got (JSON), null when its sort records nothing or it got nowhere. */
  progress: string | null;
  changedDocuments: number;
}

/** How often a journal write the database's lock refused is tried again. */
const RETRY_MS = 2_000;

/**
 * Turns the studio jobs an earlier process left running into interrupted ones, counting the documents of
 * their listing written since each started. Only for a data directory no live process uses (another one
 * may be running those jobs). Returns how many it found.
 */
export function recoverInterruptedJobs(db: Db): number {
  return db
    .prepare(
      `UPDATE studio_jobs SET state = 'interrupted', changed_documents = (
         SELECT count(*) FROM documents d
         WHERE d.listing_id = studio_jobs.listing_id AND d.updated_at >= studio_jobs.started_at)
       WHERE state = 'running'`,
    )
    .run().changes;
}

/**
 * The journal of one sort of studio job in the `studio_jobs` table (migration 8), with what each job
 * was given (its `Entry` without the columns) as JSON. Its writes never wait for the write lock, which
 * a commit on another connection can hold for minutes: a skipped entry only means that job would not be
 * reported if a stop cut it short, and a skipped removal is retried, so a job that ended is not
 * reported interrupted after the next restart (unless the studio stops first).
 */
abstract class SqliteJobJournal<
  Entry extends { id: string; listingId: string; startedAt: string },
  Found,
  Progress = never,
> {
  private readonly stmts;
  /** Ended jobs whose rows the write lock kept us from removing yet. */
  private readonly unclosed = new Set<string>();
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    kinds: Kind[],
  ) {
    const ofKinds = `kind IN (${kinds.map((k) => `'${k}'`).join(', ')})`;
    const select = `SELECT id, listing_id AS listingId, kind, given, started_at AS startedAt, progress,
      changed_documents AS changedDocuments FROM studio_jobs WHERE state = 'interrupted' AND ${ofKinds}`;
    this.stmts = {
      insert: db.prepare(`INSERT OR IGNORE INTO studio_jobs (id, listing_id, kind, state, given, started_at)
        VALUES (@id, @listingId, @kind, 'running', @given, @startedAt)`),
      progress: db.prepare(`UPDATE studio_jobs SET progress = ? WHERE id = ? AND state = 'running'`),
      remove: db.prepare(`DELETE FROM studio_jobs WHERE id = ?`),
      removeInterrupted: db.prepare(
        `DELETE FROM studio_jobs WHERE id = ? AND state = 'interrupted' AND ${ofKinds}`,
      ),
      removeListing: db.prepare(
        `DELETE FROM studio_jobs WHERE listing_id = ? AND state = 'interrupted' AND ${ofKinds}`,
      ),
      all: db.prepare(`${select} ORDER BY started_at DESC, id`),
      ofListing: db.prepare(`${select} AND listing_id = ? ORDER BY started_at DESC, id`),
    };
  }

  /** The row's kind and what the job was given. */
  protected abstract encode(entry: Entry): { kind: Kind; given: unknown };
  /** An interrupted job as its sort reports it. */
  protected abstract decode(row: Row): Found;

  opened(entry: Entry): void {
    if (!this.db.open) return;
    this.flush();
    const { kind, given } = this.encode(entry);
    const { id, listingId, startedAt } = entry;
    writeWithoutWaiting(this.db, () =>
      this.stmts.insert.run({ id, listingId, startedAt, kind, given: JSON.stringify(given) }),
    );
  }

  progressed(id: string, progress: Progress): void {
    if (!this.db.open) return;
    // Skipped while another connection holds the lock: the next progress replaces it anyway, and a
    // stop in between only reports the job as it was a step earlier.
    writeWithoutWaiting(this.db, () => this.stmts.progress.run(JSON.stringify(progress), id));
  }

  closed(id: string): void {
    this.unclosed.add(id);
    this.flush();
  }

  interrupted(listingId?: string): Found[] {
    const rows = (listingId ? this.stmts.ofListing.all(listingId) : this.stmts.all.all()) as Row[];
    return rows.map((row) => this.decode(row));
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

/** Studio ingestions and re-ingestions; what each was given is its source names. */
export class SqliteIngestJobJournal
  extends SqliteJobJournal<IngestJobEntry, InterruptedIngestion>
  implements IngestJobJournal
{
  constructor(db: Db) {
    super(db, ['ingest', 'reingest']);
  }

  protected encode({ kind, sources }: IngestJobEntry) {
    return { kind, given: { sources } };
  }

  // An ingestion records no progress: what it stored is counted from the listing's documents.
  protected decode({ given, kind, progress: _progress, ...row }: Row): InterruptedIngestion {
    return {
      ...row,
      kind: kind as IngestJobEntry['kind'],
      sources: (JSON.parse(given) as { sources?: string[] }).sources ?? [],
    };
  }
}

/** Studio pushes; what each was given is its plan (target, parts, files), its progress its parts. */
export class SqlitePushJobJournal
  extends SqliteJobJournal<PushJobEntry, InterruptedPush, PushProgress>
  implements PushJobJournal
{
  constructor(db: Db) {
    super(db, ['push']);
  }

  protected encode({ plan }: PushJobEntry) {
    return { kind: 'push' as const, given: plan };
  }

  protected decode({ id, listingId, startedAt, given, progress }: Row): InterruptedPush {
    return {
      id,
      listingId,
      startedAt,
      plan: JSON.parse(given) as PushPlan,
      progress: progress === null ? null : (JSON.parse(progress) as PushProgress),
    };
  }
}
