import { isDatabaseBusy } from '../core/uploads/storageErrors';
import type { Db } from './open';

/**
 * Runs a write that may be skipped: with a zero busy timeout, so while another connection holds the write
 * lock (a commit into a knowledge base can hold it for minutes) it fails at once instead of holding this
 * thread for the connection's 5 s timeout and then failing the request. Returns whether it was written.
 */
export function writeWithoutWaiting(db: Db, write: () => void): boolean {
  const wait = db.pragma('busy_timeout', { simple: true }) as number;
  // Statements on this connection run one at a time: no other statement sees the zero timeout.
  db.pragma('busy_timeout = 0');
  try {
    write();
    return true;
  } catch (err) {
    if (isDatabaseBusy(err)) return false;
    throw err;
  } finally {
    db.pragma(`busy_timeout = ${wait}`);
  }
}
