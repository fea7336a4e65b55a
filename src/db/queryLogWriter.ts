import { appendFileSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Statement } from 'better-sqlite3';
import { z } from 'zod';
import type { QueryLogEntry } from '../core/retrieve/searchIndex';
import { isAlive } from '../core/uploads/scratch';
import type { Db } from './open';
import { applyQueryCharge } from './repositories/credentials';
import { writeWithoutWaiting } from './withoutWaiting';

export interface QueryLogWriterOptions {
  /** How soon rows kept while another writer held the lock are tried again (ms). */
  retryMs?: number;
  /** Rows kept at most; past this a row waits for the lock as any other write does. */
  maxPending?: number;
  /** Where a failure to write kept rows is reported (their requests are answered); stderr by default. */
  log?: (line: string) => void;
  /**
   * Where rows kept when the writer is closed and still not writable go (the process stopping while a
   * commit holds the lock), one JSON object a line; they are written when the next writer on this file
   * starts. Without it such rows are reported and lost.
   */
  spillFile?: string;
}

/** A kept row as spilled: every field of a row without a charge (charged rows are never kept). */
const SpilledRow = z.object({
  id: z.string(),
  listingId: z.string(),
  apiKeyId: z.string().nullable(),
  wallet: z.string().nullable(),
  query: z.string(),
  topK: z.number().int(),
  resultCount: z.number().int(),
  latencyMs: z.number(),
  createdAt: z.string(),
  // Absent from rows spilled before the column existed.
  filterKeys: z.array(z.string()).optional(),
});

const DEFAULT_RETRY_MS = 200;
const DEFAULT_MAX_PENDING = 10_000;

/** Spill files a writer of this process has taken and not finished: no other writer here takes them. */
const replaying = new Set<string>();
let claims = 0;

/**
 * Takes the spill file for this writer by renaming it (`<file>.<pid>-<n>.replaying`), with those that
 * writers of processes now gone took and did not finish. Rows another process spills meanwhile go to a
 * new file, written at the next start: none can be appended between this writer's read and its removal
 * of the file, and no two writers replay one file.
 */
function claimSpilled(file: string, log: (line: string) => void): string[] {
  const dir = dirname(file);
  const base = basename(file);
  const taken = new RegExp(`^${base.replace(/\W/g, '\\$&')}\\.(\\d+)-\\d+\\.replaying$`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const claimed: string[] = [];
  for (const name of names) {
    const owner = Number(taken.exec(name)?.[1] ?? NaN);
    const unfinished =
      owner === process.pid ? !replaying.has(join(dir, name)) : Number.isInteger(owner) && !isAlive(owner);
    if (name !== base && !unfinished) continue;
    const to = join(dir, `${base}.${process.pid}-${++claims}.replaying`);
    try {
      renameSync(join(dir, name), to);
    } catch (err) {
      // Taken by another writer first.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        log(`${join(dir, name)}: ${(err as Error).message}`);
      continue;
    }
    replaying.add(to);
    claimed.push(to);
  }
  return claimed;
}

/**
 * Writes the query log. A commit into a knowledge base holds the database's write lock for seconds (a
 * pre-built embeddings import: for as long as its lines are read), and a retrieval whose log row waited
 * for it was held for the 5 s busy timeout and then failed, though its answer was ready. A row without a
 * charge is therefore written at once when the lock is free and otherwise kept, in order, and written by
 * a later try; reads of the log see it once that lock is released. A row with a charge is still written
 * before the answer is given, waiting as any write does: the debit must not be deferred or lost.
 */
export class QueryLogWriter {
  private pending: QueryLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly retryMs: number;
  private readonly maxPending: number;
  private readonly log: (line: string) => void;
  private readonly spillFile: string | undefined;
  /** Spill files taken at start and not written yet (claimSpilled). */
  private claimed: string[] = [];
  /** The next try of those while another writer holds the lock. */
  private spillTimer: NodeJS.Timeout | undefined;
  private readonly insertRow: Statement;

  constructor(
    private readonly db: Db,
    options: QueryLogWriterOptions = {},
  ) {
    this.insertRow = db.prepare(
      `INSERT INTO query_log (id, listing_id, api_key_id, wallet, query, top_k, result_count, latency_ms,
        debited_lamports, created_at, filter_keys)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
    this.maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.spillFile = options.spillFile;
    if (this.spillFile) {
      this.claimed = claimSpilled(this.spillFile, this.log);
      this.writeSpilled();
    }
  }

  write(entry: QueryLogEntry): void {
    if (entry.charge || this.pending.length >= this.maxPending) {
      // One transaction: the debit happens exactly when the row is written, never without it or twice.
      this.db.transaction(() => {
        if (entry.charge) applyQueryCharge(this.db, entry.charge, entry.createdAt);
        this.insert(entry);
      })();
      return;
    }
    if (this.pending.length === 0 && writeWithoutWaiting(this.db, () => this.insert(entry))) return;
    this.pending.push(entry);
    this.schedule();
  }

  /** Rows kept for a later try. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Writes the kept rows, waiting for the lock as long as the connection's busy timeout allows. */
  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    clearTimeout(this.spillTimer);
    this.spillTimer = undefined;
    // Left for the next start, or the next writer of this process.
    for (const file of this.claimed.splice(0)) replaying.delete(file);
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    try {
      this.insertAll(rows);
    } catch (err) {
      const kept = this.spill(rows);
      this.log(
        `${rows.length} query log rows were not written: ${(err as Error).message}` +
          (kept ? `; kept in ${this.spillFile}, to be written at the next start` : ''),
      );
    }
  }

  /** Appends rows to the spill file; false when there is none or it cannot be written. */
  private spill(rows: QueryLogEntry[]): boolean {
    if (!this.spillFile) return false;
    try {
      const lines = rows.map((row) => `${JSON.stringify(SpilledRow.parse(row))}\n`).join('');
      appendFileSync(this.spillFile, lines, { mode: 0o600 });
      return true;
    } catch (err) {
      this.log(`${this.spillFile}: ${(err as Error).message}`);
      return false;
    }
  }

  /**
   * Writes the rows writers closed earlier spilled (the files claimSpilled took), removing each file once
   * written. A row already in the log (a process stopped between writing and removing) is skipped. It
   * never waits for the lock (this runs as the services open): while another writer holds it, it tries
   * again every retryMs, and files still here when this writer closes wait for the next start. Lines that
   * cannot be read are kept aside in `<spill file>.unreadable` and reported, never retried or dropped
   * silently.
   */
  private writeSpilled(): void {
    this.spillTimer = undefined;
    while (this.claimed.length > 0) {
      const file = this.claimed[0]!;
      const outcome = this.replay(file);
      if (outcome === 'busy') {
        this.spillTimer = setTimeout(() => this.writeSpilled(), this.retryMs);
        this.spillTimer.unref();
        return;
      }
      this.claimed.shift();
      // A file that failed stays as it is, for a later start.
      replaying.delete(file);
    }
  }

  private replay(file: string): 'written' | 'busy' | 'failed' {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      this.log(`${file}: ${(err as Error).message}`);
      return 'failed';
    }
    const rows: z.infer<typeof SpilledRow>[] = [];
    const unreadable: string[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        rows.push(SpilledRow.parse(JSON.parse(line)));
      } catch {
        unreadable.push(line);
      }
    }
    try {
      const insertOnce = this.db.prepare(
        `INSERT OR IGNORE INTO query_log (id, listing_id, api_key_id, wallet, query, top_k, result_count,
          latency_ms, debited_lamports, created_at, filter_keys)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
      );
      const written = writeWithoutWaiting(this.db, () =>
        this.db.transaction(() => {
          for (const r of rows) {
            insertOnce.run(
              r.id,
              r.listingId,
              r.apiKeyId,
              r.wallet,
              r.query,
              r.topK,
              r.resultCount,
              r.latencyMs,
              r.createdAt,
              filterKeysColumn(r.filterKeys),
            );
          }
        })(),
      );
      if (!written) return 'busy';
    } catch (err) {
      this.log(`${rows.length} query log rows kept in ${file} were not written: ${(err as Error).message}`);
      return 'failed';
    }
    try {
      if (unreadable.length > 0) {
        const aside = `${this.spillFile}.unreadable`;
        appendFileSync(aside, `${unreadable.join('\n')}\n`, { mode: 0o600 });
        this.log(`${unreadable.length} lines of ${file} are not query log rows; kept in ${aside}`);
      }
      unlinkSync(file);
    } catch (err) {
      // Written (once): a later start writes nothing twice.
      this.log(`${file}: ${(err as Error).message}`);
    }
    return 'written';
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.retryMs);
    // Kept rows never keep the process alive; close() writes them.
    this.timer.unref();
  }

  private flush(): void {
    const rows = this.pending;
    try {
      if (!writeWithoutWaiting(this.db, () => this.insertAll(rows))) return this.schedule();
    } catch (err) {
      // Not a busy lock (a closed or broken database): trying again would fail the same way.
      this.log(`${rows.length} query log rows were not written: ${(err as Error).message}`);
    }
    this.pending = [];
  }

  private insertAll(rows: QueryLogEntry[]): void {
    this.db.transaction(() => {
      for (const row of rows) this.insert(row);
    })();
  }

  private insert(entry: QueryLogEntry): void {
    this.insertRow.run(
      entry.id,
      entry.listingId,
      entry.apiKeyId,
      entry.wallet,
      entry.query,
      entry.topK,
      entry.resultCount,
      entry.latencyMs,
      entry.charge?.lamports ?? 0,
      entry.createdAt,
      filterKeysColumn(entry.filterKeys),
    );
  }
}

function filterKeysColumn(keys: string[] | undefined): string | null {
  return keys && keys.length > 0 ? JSON.stringify(keys) : null;
}
