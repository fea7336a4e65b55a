import type { ApiKeyPurpose, ApiKeyRecord, ApiKeyRepository } from '../../core/keys/apiKeys';
import type { Db } from '../open';
import { writeWithoutWaiting } from '../withoutWaiting';

const SELECT = `SELECT id, key_hash AS keyHash, prefix, label, wallet, created_at AS createdAt,
  last_used_at AS lastUsedAt, revoked_at AS revokedAt FROM api_keys`;

export class SqliteApiKeyRepository implements ApiKeyRepository {
  private readonly stmts;

  constructor(private readonly db: Db) {
    this.stmts = {
      insert: db.prepare(`INSERT INTO api_keys (id, key_hash, prefix, label, wallet, created_at, purpose)
        VALUES (@id, @keyHash, @prefix, @label, @wallet, @createdAt, @purpose)`),
      listAll: db.prepare(`${SELECT} ORDER BY created_at DESC, id`),
      listByWallet: db.prepare(`${SELECT} WHERE wallet = ? ORDER BY created_at DESC, id`),
      byId: db.prepare(`${SELECT} WHERE id = ?`),
      activeByHash: db.prepare(`${SELECT} WHERE key_hash = ? AND revoked_at IS NULL`),
      byHash: db.prepare(`${SELECT} WHERE key_hash = ?`),
      revoke: db.prepare(`UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL`),
      revokeMadeFor: db.prepare(`UPDATE api_keys SET revoked_at = ?
        WHERE purpose = ? AND created_at < ? AND revoked_at IS NULL`),
      touch: db.prepare(`UPDATE api_keys SET last_used_at = ? WHERE id = ?`),
    };
  }

  insert(record: ApiKeyRecord, purpose?: ApiKeyPurpose): void {
    const { id, keyHash, prefix, label, wallet, createdAt } = record;
    this.stmts.insert.run({ id, keyHash, prefix, label, wallet, createdAt, purpose: purpose ?? null });
  }
  list(wallet?: string): ApiKeyRecord[] {
    return (wallet ? this.stmts.listByWallet.all(wallet) : this.stmts.listAll.all()) as ApiKeyRecord[];
  }
  findById(id: string): ApiKeyRecord | undefined {
    return this.stmts.byId.get(id) as ApiKeyRecord | undefined;
  }
  findActiveByHash(keyHash: string): ApiKeyRecord | undefined {
    return this.stmts.activeByHash.get(keyHash) as ApiKeyRecord | undefined;
  }
  findByHash(keyHash: string): ApiKeyRecord | undefined {
    return this.stmts.byHash.get(keyHash) as ApiKeyRecord | undefined;
  }
  revoke(id: string, at: string): void {
    this.stmts.revoke.run(at, id);
  }
  /**
   * Last use is informational: while a commit holds the write lock it is skipped (and written by a later
   * request), rather than holding the request 5 s and then failing it. Every request authenticated by a
   * key more than a minute after its last use writes it: during a long import, each such request failed
   * with a 500 "database is busy", a poll of the import's own progress included.
   */
  revokeMadeFor(purpose: ApiKeyPurpose, createdBefore: string, at: string): number {
    return this.stmts.revokeMadeFor.run(at, purpose, createdBefore).changes;
  }
  touch(id: string, at: string): void {
    writeWithoutWaiting(this.db, () => this.stmts.touch.run(at, id));
  }
}
