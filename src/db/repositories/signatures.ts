import type { UsedSignatureStore } from '../../core/auth/walletSignature';
import type { Db } from '../open';

/** How often expired signatures are swept out; between sweeps the time check alone refuses them. */
const PRUNE_EVERY_MS = 30_000;

/** used_signatures: each wallet-auth signature is accepted once while its timestamp is still valid. */
export class SqliteUsedSignatureRepository implements UsedSignatureStore {
  private readonly stmts;
  private lastPrune = 0;

  constructor(db: Db) {
    this.stmts = {
      claim: db.prepare(`INSERT INTO used_signatures (signature, expires_at) VALUES (?, ?)
        ON CONFLICT (signature) DO NOTHING`),
      prune: db.prepare(`DELETE FROM used_signatures WHERE expires_at < ?`),
    };
  }

  claim(signature: string, expiresAtMs: number, nowMs: number): boolean {
    if (nowMs - this.lastPrune >= PRUNE_EVERY_MS) {
      this.stmts.prune.run(nowMs);
      this.lastPrune = nowMs;
    }
    return this.stmts.claim.run(signature, expiresAtMs).changes === 1;
  }
}
