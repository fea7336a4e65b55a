import type { CredentialRepository, QueryCharge } from '../../core/marketplace/credentials';
import { CredentialNotFound, InsufficientBalance } from '../../core/marketplace/errors';
import type { AccessRecord } from '../../core/marketplace/ledger/ledger';
import type { Db } from '../open';

interface CredentialRow {
  id: string;
  listing_id: string;
  holder_wallet: string;
  access_model: AccessRecord['accessModel'];
  expires_at: string | null;
  balance_lamports: number;
  pda_address: string | null;
  test_grant: number;
  created_at: string;
  updated_at: string;
}

const NEWEST_FIRST = 'ORDER BY created_at DESC, id DESC';

export class SqliteCredentialRepository implements CredentialRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      find: db.prepare(`SELECT * FROM credentials WHERE listing_id = ? AND holder_wallet = ?`),
      byHolder: db.prepare(`SELECT * FROM credentials WHERE holder_wallet = ? ${NEWEST_FIRST}`),
      all: db.prepare(`SELECT * FROM credentials ${NEWEST_FIRST}`),
      byListing: db.prepare(`SELECT * FROM credentials WHERE listing_id = ? ${NEWEST_FIRST}`),
      save: db.prepare(`
        INSERT INTO credentials (id, listing_id, holder_wallet, access_model, expires_at, balance_lamports,
          pda_address, test_grant, created_at, updated_at)
        VALUES (@id, @listing_id, @holder_wallet, @access_model, @expires_at, @balance_lamports,
          @pda_address, @test_grant, @created_at, @updated_at)
        ON CONFLICT (listing_id, holder_wallet) DO UPDATE SET access_model = excluded.access_model,
          expires_at = excluded.expires_at, balance_lamports = excluded.balance_lamports,
          pda_address = excluded.pda_address, test_grant = excluded.test_grant,
          updated_at = excluded.updated_at`),
      delete: db.prepare(`DELETE FROM credentials WHERE listing_id = ? AND holder_wallet = ?`),
    };
  }

  find(listingId: string, holder: string): AccessRecord | undefined {
    const row = this.stmts.find.get(listingId, holder) as CredentialRow | undefined;
    return row && fromRow(row);
  }
  listByHolder(holder: string): AccessRecord[] {
    return (this.stmts.byHolder.all(holder) as CredentialRow[]).map(fromRow);
  }
  listAll(listingId?: string): AccessRecord[] {
    const rows = listingId ? this.stmts.byListing.all(listingId) : this.stmts.all.all();
    return (rows as CredentialRow[]).map(fromRow);
  }
  save(r: AccessRecord): void {
    this.stmts.save.run({
      id: r.id,
      listing_id: r.listingId,
      holder_wallet: r.holderWallet,
      access_model: r.accessModel,
      expires_at: r.expiresAt,
      balance_lamports: r.balanceLamports,
      pda_address: r.pdaAddress,
      test_grant: r.testGrant ? 1 : 0,
      created_at: r.createdAt,
      updated_at: r.updatedAt,
    });
  }
  delete(listingId: string, holder: string): void {
    this.stmts.delete.run(listingId, holder);
  }
}

/**
 * Debits one query's price. Call it inside the transaction that writes the query's log row. The
 * UPDATE only matches while the balance covers the price, so concurrent queries can never take it
 * below zero: the one that finds it short is refused (403), and its transaction writes nothing.
 */
export function applyQueryCharge(db: Db, charge: QueryCharge, at: string): void {
  const debited = db
    .prepare(
      `UPDATE credentials SET balance_lamports = balance_lamports - ?, updated_at = ?
      WHERE id = ? AND balance_lamports >= ?`,
    )
    .run(charge.lamports, at, charge.credentialId, charge.lamports);
  if (debited.changes !== 1) {
    const balance = db
      .prepare(`SELECT balance_lamports FROM credentials WHERE id = ?`)
      .pluck()
      .get(charge.credentialId) as number | undefined;
    if (balance === undefined) throw new CredentialNotFound(charge.listingId);
    throw new InsufficientBalance(charge.listingId, balance, charge.lamports);
  }
  if (charge.earns) {
    db.prepare(
      `INSERT INTO listing_earnings (listing_id, earned_lamports) VALUES (?, ?)
      ON CONFLICT (listing_id) DO UPDATE SET earned_lamports = earned_lamports + excluded.earned_lamports`,
    ).run(charge.listingId, charge.lamports);
  }
}

function fromRow(row: CredentialRow): AccessRecord {
  return {
    id: row.id,
    listingId: row.listing_id,
    holderWallet: row.holder_wallet,
    accessModel: row.access_model,
    expiresAt: row.expires_at,
    balanceLamports: row.balance_lamports,
    pdaAddress: row.pda_address,
    testGrant: row.test_grant === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
