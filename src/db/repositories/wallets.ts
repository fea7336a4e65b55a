import type { WalletRecord, WalletRepository } from '../../core/wallets/wallets';
import type { Db } from '../open';

interface WalletRow {
  name: string;
  address: string;
  sealed_secret: Buffer;
  encrypted: number;
  is_default: number;
  created_at: string;
}

export class SqliteWalletRepository implements WalletRepository {
  private readonly stmts;

  constructor(db: Db) {
    this.stmts = {
      insert:
        db.prepare(`INSERT INTO wallets (name, address, sealed_secret, encrypted, is_default, created_at)
        VALUES (?, ?, ?, ?, ?, ?)`),
      list: db.prepare(`SELECT * FROM wallets ORDER BY is_default DESC, created_at, name`),
      byName: db.prepare(`SELECT * FROM wallets WHERE name = ?`),
      byAddress: db.prepare(`SELECT * FROM wallets WHERE address = ?`),
      byDefault: db.prepare(`SELECT * FROM wallets WHERE is_default = 1`),
    };
  }

  insert(r: WalletRecord): void {
    this.stmts.insert.run(
      r.name,
      r.address,
      Buffer.from(r.sealedSecret),
      r.encrypted ? 1 : 0,
      r.isDefault ? 1 : 0,
      r.createdAt,
    );
  }
  list(): WalletRecord[] {
    return (this.stmts.list.all() as WalletRow[]).map(fromRow);
  }
  findByName(name: string): WalletRecord | undefined {
    return maybe(this.stmts.byName.get(name));
  }
  findByAddress(address: string): WalletRecord | undefined {
    return maybe(this.stmts.byAddress.get(address));
  }
  findDefault(): WalletRecord | undefined {
    return maybe(this.stmts.byDefault.get());
  }
}

const maybe = (row: unknown): WalletRecord | undefined => (row ? fromRow(row as WalletRow) : undefined);

function fromRow(row: WalletRow): WalletRecord {
  return {
    name: row.name,
    address: row.address,
    sealedSecret: new Uint8Array(row.sealed_secret),
    encrypted: row.encrypted === 1,
    isDefault: row.is_default === 1,
    createdAt: row.created_at,
  };
}
