import type { LedgerEntry, LedgerRepository } from '../../core/marketplace/ledger/local';
import type { Db } from '../open';

/** Thrown inside a dry run's transaction so better-sqlite3 rolls it back. */
const ROLLBACK = Symbol('rollback');

const ENTRY_COLUMNS = `instruction, listing_id AS listingId, wallet, amount_lamports AS amountLamports,
  signature, message, created_at AS createdAt, ledger`;

/** ledger_entries (every accepted instruction) and listing_earnings, for the local ledger. */
export class SqliteLedgerRepository implements LedgerRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      used: db.prepare(`SELECT 1 FROM ledger_entries WHERE signature = ?`).pluck(),
      append: db.prepare(`INSERT INTO ledger_entries
        (instruction, listing_id, wallet, amount_lamports, signature, message, created_at, ledger)
        VALUES (@instruction, @listingId, @wallet, @amountLamports, @signature, @message, @createdAt, @ledger)`),
      onChain: db
        .prepare(
          `SELECT 1 FROM ledger_entries
          WHERE listing_id = ? AND instruction = 'create_listing' AND ledger = 'solana' LIMIT 1`,
        )
        .pluck(),
      all: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries ORDER BY id`),
      byListing: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE listing_id = ? ORDER BY id`),
      earnings: db.prepare(`SELECT earned_lamports AS earnedLamports, withdrawn_lamports AS withdrawnLamports
        FROM listing_earnings WHERE listing_id = ?`),
      addEarned: db.prepare(`INSERT INTO listing_earnings (listing_id, earned_lamports) VALUES (?, ?)
        ON CONFLICT (listing_id) DO UPDATE SET earned_lamports = earned_lamports + excluded.earned_lamports`),
      // The table's CHECK (withdrawn <= earned) refuses any payout beyond what was earned.
      addWithdrawn: db.prepare(`UPDATE listing_earnings SET withdrawn_lamports = withdrawn_lamports + ?
        WHERE listing_id = ?`),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }
  dryRun(fn: () => unknown): void {
    try {
      this.db.transaction(() => {
        fn();
        throw ROLLBACK;
      })();
    } catch (err) {
      if (err !== ROLLBACK) throw err;
    }
  }
  signatureUsed(signature: string): boolean {
    return this.stmts.used.get(signature) !== undefined;
  }
  append(entry: LedgerEntry): void {
    this.stmts.append.run(entry);
  }
  entries(listingId?: string): LedgerEntry[] {
    return (listingId ? this.stmts.byListing.all(listingId) : this.stmts.all.all()) as LedgerEntry[];
  }
  createdOnChain(listingId: string): boolean {
    return this.stmts.onChain.get(listingId) !== undefined;
  }
  earnings(listingId: string): { earnedLamports: number; withdrawnLamports: number } {
    return (
      (this.stmts.earnings.get(listingId) as { earnedLamports: number; withdrawnLamports: number }) ?? {
        earnedLamports: 0,
        withdrawnLamports: 0,
      }
    );
  }
  addEarned(listingId: string, lamports: number): void {
    this.stmts.addEarned.run(listingId, lamports);
  }
  addWithdrawn(listingId: string, lamports: number): void {
    const { changes } = this.stmts.addWithdrawn.run(lamports, listingId);
    if (changes !== 1) throw new Error(`listing ${listingId} has no earnings to withdraw`);
  }
}
