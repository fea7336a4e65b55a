import type { EvalRun, EvalRunReport } from '../../core/retrieve/eval/runs';
import type { Db } from '../open';

interface EvalRunRow {
  id: string;
  listing_id: string;
  name: string;
  report: string;
  created_at: string;
}

const toRun = (row: EvalRunRow): EvalRun => ({
  id: row.id,
  listingId: row.listing_id,
  name: row.name,
  createdAt: row.created_at,
  report: JSON.parse(row.report) as EvalRunReport,
});

/** Stored evaluation runs of the studio, newest first. */
export class SqliteEvalRunRepository {
  private readonly stmts;
  constructor(db: Db) {
    this.stmts = {
      insert: db.prepare(
        `INSERT INTO eval_runs (id, listing_id, name, report, created_at) VALUES (?, ?, ?, ?, ?)`,
      ),
      list: db.prepare(`SELECT * FROM eval_runs WHERE listing_id = ? ORDER BY created_at DESC, rowid DESC`),
      get: db.prepare(`SELECT * FROM eval_runs WHERE id = ?`),
      remove: db.prepare(`DELETE FROM eval_runs WHERE id = ?`),
    };
  }
  insert(run: EvalRun): void {
    this.stmts.insert.run(run.id, run.listingId, run.name, JSON.stringify(run.report), run.createdAt);
  }
  list(listingId: string): EvalRun[] {
    return (this.stmts.list.all(listingId) as EvalRunRow[]).map(toRun);
  }
  get(id: string): EvalRun | undefined {
    const row = this.stmts.get.get(id) as EvalRunRow | undefined;
    return row && toRun(row);
  }
  remove(id: string): boolean {
    return this.stmts.remove.run(id).changes > 0;
  }
}
