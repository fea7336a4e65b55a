import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { QueryLogEntry } from '../../src/core/retrieve/searchIndex';
import { QUERY_LOG_SPILL_FILE } from '../../src/db/open';
import { QueryLogWriter } from '../../src/db/queryLogWriter';
import { openServices, type StudioServices } from '../../src/db/services';
import { tempDir } from '../helpers/studio';

describe('QueryLogWriter', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;
  let other: Database.Database;
  let logged: string[];
  let writer: QueryLogWriter;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(dir.path);
    // A commit on its worker thread holds the lock like this connection (a large import: minutes).
    other = new Database(services.db.name);
    logged = [];
    writer = new QueryLogWriter(services.db, { retryMs: 10, log: (line) => logged.push(line) });
  });

  afterEach(() => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    services.close();
    dir.remove();
  });

  let n = 0;
  const entry = (extra: Partial<QueryLogEntry> = {}): QueryLogEntry => ({
    id: `qry_${++n}`,
    listingId: 'lst_1',
    apiKeyId: null,
    wallet: null,
    query: `query ${n}`,
    topK: 5,
    resultCount: 3,
    latencyMs: 1.5,
    createdAt: new Date(Date.UTC(2026, 10, 26, 10, 0, n)).toISOString(),
    ...extra,
  });
  const ids = () => services.db.prepare(`SELECT id FROM query_log ORDER BY created_at`).pluck().all();

  it('writes a row at once while the lock is free', () => {
    writer.write(entry());
    expect(ids()).toEqual(['qry_' + n]);
    expect(writer.pendingCount).toBe(0);
  });

  it('keeps rows while another writer holds the lock, without waiting, and writes them in order once it is released', async () => {
    // Were the writer to wait, it would hold this thread for a minute and the test would time out.
    services.db.pragma('busy_timeout = 60000');
    other.exec('BEGIN IMMEDIATE');
    const first = entry();
    const second = entry();
    writer.write(first);
    writer.write(second);
    expect(writer.pendingCount).toBe(2);
    expect(ids()).toEqual([]);
    // Tries again while the lock is still held: nothing written, nothing lost.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(writer.pendingCount).toBe(2);
    other.exec('COMMIT');
    // A row written while some are kept goes after them, not before.
    const third = entry();
    writer.write(third);
    await vi.waitFor(() => expect(writer.pendingCount).toBe(0));
    expect(ids()).toEqual([first.id, second.id, third.id]);
    expect(services.db.prepare(`SELECT * FROM query_log WHERE id = ?`).get(first.id)).toMatchObject({
      listing_id: 'lst_1',
      query: first.query,
      top_k: 5,
      result_count: 3,
      latency_ms: 1.5,
      debited_lamports: 0,
      created_at: first.createdAt,
    });
    expect(logged).toEqual([]);
  });

  it('writes a charged row before returning, waiting for the lock: a debit is never deferred', () => {
    services.db.pragma('busy_timeout = 20');
    other.exec('BEGIN IMMEDIATE');
    const charged = entry({
      charge: { listingId: 'lst_1', credentialId: 'crd_none', holder: 'wallet', lamports: 10, earns: true },
    });
    expect(() => writer.write(charged)).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    expect(writer.pendingCount).toBe(0);
  });

  it('waits for the lock once as many rows as it keeps are kept', () => {
    const small = new QueryLogWriter(services.db, { retryMs: 10_000, maxPending: 2 });
    services.db.pragma('busy_timeout = 20');
    other.exec('BEGIN IMMEDIATE');
    small.write(entry());
    small.write(entry());
    expect(() => small.write(entry())).toThrow(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    expect(small.pendingCount).toBe(2);
    other.exec('ROLLBACK');
    small.close();
    expect(ids()).toHaveLength(2);
  });

  it('writes kept rows when closed, and reports rows it could not write', () => {
    services.db.pragma('busy_timeout = 20');
    other.exec('BEGIN IMMEDIATE');
    writer.write(entry());
    other.exec('ROLLBACK');
    writer.close();
    expect(ids()).toHaveLength(1);

    other.exec('BEGIN IMMEDIATE');
    writer.write(entry());
    writer.close();
    expect(logged).toEqual([expect.stringMatching(/^1 query log rows were not written: database is locked/)]);
    expect(writer.pendingCount).toBe(0);
  });

  describe('rows still not writable when it closes (the process stopping while a commit holds the lock)', () => {
    const spillFile = () => join(dir.path, QUERY_LOG_SPILL_FILE);
    const spilledIds = () =>
      readFileSync(spillFile(), 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as QueryLogEntry).id);
    /** Spill files here, the file itself and those writers took (`.replaying`); lines set aside are not. */
    const spillFiles = () =>
      readdirSync(dir.path)
        .filter((name) => name.startsWith(QUERY_LOG_SPILL_FILE) && !name.endsWith('.unreadable'))
        .sort();

    it('keeps them in the spill file, and the next writer writes them once and removes it', () => {
      const spilling = new QueryLogWriter(services.db, {
        spillFile: spillFile(),
        log: (l) => logged.push(l),
      });
      services.db.pragma('busy_timeout = 20');
      other.exec('BEGIN IMMEDIATE');
      // The first as rows were spilled before the filter keys were logged.
      const first = entry();
      const second = entry({ filterKeys: ['page', 'source'] });
      spilling.write(first);
      spilling.write(second);
      spilling.close();
      expect(logged).toEqual([
        expect.stringMatching(
          /^2 query log rows were not written: database is locked; kept in .*query-log-kept\.jsonl/,
        ),
      ]);
      expect(spilledIds()).toEqual([first.id, second.id]);
      other.exec('ROLLBACK');

      new QueryLogWriter(services.db, { spillFile: spillFile() });
      expect(ids()).toEqual([first.id, second.id]);
      expect(services.db.prepare(`SELECT * FROM query_log WHERE id = ?`).get(second.id)).toMatchObject({
        listing_id: 'lst_1',
        query: second.query,
        top_k: 5,
        result_count: 3,
        latency_ms: 1.5,
        debited_lamports: 0,
        created_at: second.createdAt,
        filter_keys: '["page","source"]',
      });
      expect(
        services.db.prepare(`SELECT filter_keys FROM query_log WHERE id = ?`).pluck().get(first.id),
      ).toBe(null);
      expect(existsSync(spillFile())).toBe(false);
      // A spill file whose rows were written before it could be removed: nothing twice.
      writeFileSync(spillFile(), `${JSON.stringify(first)}\n`);
      new QueryLogWriter(services.db, { spillFile: spillFile() });
      expect(ids()).toEqual([first.id, second.id]);
      expect(existsSync(spillFile())).toBe(false);
    });

    it('does not wait for the lock at start: writes them once it is free, and sets lines it cannot read aside', async () => {
      const kept = entry();
      writeFileSync(spillFile(), `${JSON.stringify(kept)}\nnot a row\n{"id":1}\n`);
      // Were the writer to wait at start, it would hold this thread for a minute and the test time out.
      services.db.pragma('busy_timeout = 60000');
      other.exec('BEGIN IMMEDIATE');
      const starting = new QueryLogWriter(services.db, {
        spillFile: spillFile(),
        retryMs: 10,
        log: (l) => logged.push(l),
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(ids()).toEqual([]);
      // Taken by this writer: renamed, so that rows spilled from now on go to a new file.
      expect(spillFiles()).toEqual([
        expect.stringMatching(new RegExp(`\\.${process.pid}-\\d+\\.replaying$`)),
      ]);
      other.exec('ROLLBACK');

      await vi.waitFor(() => expect(spillFiles()).toEqual([]));
      expect(ids()).toEqual([kept.id]);
      expect(readFileSync(`${spillFile()}.unreadable`, 'utf8')).toBe('not a row\n{"id":1}\n');
      expect(logged).toEqual([
        expect.stringMatching(/^2 lines of .* are not query log rows; kept in .*\.unreadable$/),
      ]);
      starting.close();
    });

    it('leaves the file for the next start when it closes before the lock is free', () => {
      const kept = entry();
      writeFileSync(spillFile(), `${JSON.stringify(kept)}\n`);
      other.exec('BEGIN IMMEDIATE');
      new QueryLogWriter(services.db, { spillFile: spillFile(), retryMs: 10 }).close();
      other.exec('ROLLBACK');
      expect(spillFiles()).toEqual([expect.stringMatching(/\.replaying$/)]);
      // The next writer, here of the same process, takes the file the closed one had taken.
      new QueryLogWriter(services.db, { spillFile: spillFile() });
      expect(ids()).toEqual([kept.id]);
      expect(spillFiles()).toEqual([]);
    });

    it('loses no row another process spills while it writes the file it took', () => {
      const kept = entry();
      const late = entry();
      writeFileSync(spillFile(), `${JSON.stringify(kept)}\n`);
      // Another process closing during this writer's replay appends to the spill file: here, as the kept
      // row is inserted, between this writer's read of its file and the removal of that file.
      services.db.function('spill_late', () => {
        writeFileSync(spillFile(), `${JSON.stringify(late)}\n`, { flag: 'a' });
        return null;
      });
      services.db.exec(
        `CREATE TEMP TRIGGER spill_late AFTER INSERT ON query_log BEGIN SELECT spill_late(); END`,
      );
      try {
        new QueryLogWriter(services.db, { spillFile: spillFile() });
      } finally {
        services.db.exec('DROP TRIGGER spill_late');
      }
      expect(ids()).toEqual([kept.id]);
      // The late row is in a file of its own, for the next start.
      expect(spillFiles()).toEqual([QUERY_LOG_SPILL_FILE]);
      expect(spilledIds()).toEqual([late.id]);
      new QueryLogWriter(services.db, { spillFile: spillFile() });
      expect(ids()).toEqual([kept.id, late.id]);
      expect(spillFiles()).toEqual([]);
    });

    it('writes the files that processes now gone had taken, and leaves those of live ones', () => {
      const gone = spawnSync(process.execPath, ['-e', '0']).pid;
      const live = process.ppid;
      const fromGone = entry();
      const fromLive = entry();
      const taken = (pid: number) => `${QUERY_LOG_SPILL_FILE}.${pid}-1.replaying`;
      writeFileSync(join(dir.path, taken(gone)), `${JSON.stringify(fromGone)}\n`);
      writeFileSync(join(dir.path, taken(live)), `${JSON.stringify(fromLive)}\n`);
      new QueryLogWriter(services.db, { spillFile: spillFile() });
      expect(ids()).toEqual([fromGone.id]);
      expect(spillFiles()).toEqual([taken(live)]);
    });

    it("are kept by the services' close and written when the data directory is opened again", async () => {
      const reopenedIds = () => {
        const again = openServices(dir.path);
        try {
          return again.db.prepare(`SELECT id FROM query_log`).pluck().all();
        } finally {
          again.close();
        }
      };
      const wallet = services.wallets.defaultWallet().address;
      const listingId = services.listings.create(
        { title: 'KB', accessModel: 'one_time', price: 0 },
        wallet,
      ).id;
      services.db.pragma('busy_timeout = 20');
      other.exec('BEGIN IMMEDIATE');
      // A retrieval while a commit holds the lock: answered, its log row kept.
      const { queryId } = await services.retrieval.retrieve({ listingId, query: 'puffin' }, 'studio');
      const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        services.close();
      } finally {
        stderr.mockRestore();
      }
      expect(existsSync(spillFile())).toBe(true);
      other.exec('ROLLBACK');
      expect(reopenedIds()).toEqual([queryId]);
      expect(existsSync(spillFile())).toBe(false);
      services = openServices(dir.path); // for afterEach
    });
  });

  it('reports rows it could not write for another reason than the lock, and does not try them again', async () => {
    other.exec('BEGIN IMMEDIATE');
    writer.write(entry());
    other.exec('ROLLBACK');
    other.exec('DROP TABLE query_log');
    await vi.waitFor(() => expect(logged).toHaveLength(1));
    expect(logged[0]).toMatch(/^1 query log rows were not written: no such table: query_log/);
    expect(writer.pendingCount).toBe(0);
  });
});
