import type Database from 'better-sqlite3';

/**
 * Prepared statements kept by their SQL text, so a hot path (every /v1/retrieve runs half a dozen)
 * prepares each once instead of per call (~20-40 µs each). SQL built from request shapes (filters) can
 * vary without end: past `limit` texts the cache starts over rather than growing.
 */
export class StatementCache {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    private readonly limit = 256,
  ) {}

  get(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= this.limit) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
