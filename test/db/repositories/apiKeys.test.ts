import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../../src/core/keys/apiKeys';
import { SqliteApiKeyRepository } from '../../../src/db/repositories/apiKeys';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

describe('API keys while another connection holds the write lock', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let now: Date;
  let keys: ApiKeyService;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(dir.path);
    now = new Date('2026-11-26T10:00:00.000Z');
    keys = new ApiKeyService(new SqliteApiKeyRepository(services.db), () => now);
  });

  afterEach(() => {
    services.close();
    dir.remove();
  });

  const lastUsed = (id: string) => keys.list().find((k) => k.id === id)?.lastUsedAt;

  it('authenticates without writing the last use, rather than failing the request', () => {
    const wallet = services.wallets.defaultWallet().address;
    const { id, key } = keys.create(wallet);
    expect(keys.authenticate(key)).toEqual({ keyId: id, wallet });
    expect(lastUsed(id)).toBe('2026-11-26T10:00:00.000Z');

    // A commit on its worker thread holds the lock like this connection, for minutes in a large import.
    now = new Date('2026-11-26T10:05:00.000Z');
    const other = new Database(services.db.name);
    other.exec('BEGIN IMMEDIATE');
    try {
      // Before: the last-use write waited the connection's 5 s busy timeout, then threw SQLITE_BUSY (a 500).
      expect(keys.authenticate(key)).toEqual({ keyId: id, wallet });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    expect(lastUsed(id)).toBe('2026-11-26T10:00:00.000Z');
    // The next request once the lock is free writes it.
    expect(keys.authenticate(key)).toEqual({ keyId: id, wallet });
    expect(lastUsed(id)).toBe('2026-11-26T10:05:00.000Z');
    expect(services.db.pragma('busy_timeout', { simple: true })).toBe(5_000);
  });
});
