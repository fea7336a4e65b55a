import type { Db } from '../open';

export class SqliteSettingsRepository {
  private readonly stmts;
  constructor(db: Db) {
    this.stmts = {
      get: db.prepare(`SELECT value FROM settings WHERE key = ?`),
      all: db.prepare(`SELECT key, value FROM settings ORDER BY key`),
      set: db.prepare(`INSERT INTO settings (key, value) VALUES (?, ?)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
    };
  }
  get(key: string): string | undefined {
    return (this.stmts.get.get(key) as { value: string } | undefined)?.value;
  }
  all(): Record<string, string> {
    return Object.fromEntries(
      (this.stmts.all.all() as { key: string; value: string }[]).map((r) => [r.key, r.value]),
    );
  }
  set(key: string, value: string): void {
    this.stmts.set.run(key, value);
  }
}
