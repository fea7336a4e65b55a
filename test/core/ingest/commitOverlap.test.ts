import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CommitStart, WritesInFlight } from '../../../src/core/ingest/commitOverlap';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { openServices, type StudioServices } from '../../../src/db/services';
import { tempDir } from '../../helpers/studio';

describe('CommitStart', () => {
  const files = [{ bytes: 1_000_000 }, { bytes: 400_000 }, { bytes: 90_000 }];
  /** A CommitStart whose clock reads `at.ms` (ms since it was made). */
  const startAt = () => {
    const at = { ms: 0 };
    return { start: new CommitStart(files, () => at.ms), at };
  };

  it('begins once what is left to read, at the pace measured so far, should take about as long as committing what is staged', () => {
    const { start, at } = startAt();
    // 2,000 chunks take about 68 ms to commit (34 µs each).
    at.ms = 100; // 1 MB read in 100 ms: the 490 KB left take 49 ms
    expect(start.before(1, 2_000)).toBe(true);
    at.ms = 200; // ...or 98 ms at half that pace
    expect(start.before(1, 2_000)).toBe(false);
    expect(start.before(1, 3_000)).toBe(true); // 102 ms of commit
    expect(start.before(2, 2_000)).toBe(true); // 1.4 MB in 200 ms: the 90 KB left take 13 ms
  });

  it('follows the reading: a slower one begins the commit later', () => {
    const fast = startAt();
    const slow = startAt();
    fast.at.ms = 100;
    slow.at.ms = 1_000;
    expect(fast.start.before(1, 5_000)).toBe(true);
    expect(slow.start.before(1, 5_000)).toBe(false); // 490 ms left against 170 ms of commit
    expect(slow.start.before(2, 5_000)).toBe(true); // 64 ms left
  });

  it('commits a small ingestion at its end, and begins nothing before a file is read', () => {
    const { start, at } = startAt();
    at.ms = 10;
    expect(start.before(2, 1_999)).toBe(false);
    expect(start.before(3, 1_999)).toBe(false);
    expect(start.before(0, 5_000)).toBe(false);
  });
});

describe('WritesInFlight', () => {
  const deferred = () => {
    let resolve!: () => void;
    let reject!: (err: Error) => void;
    const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    return { promise, resolve, reject };
  };

  it('goes on within its budget and waits for the oldest batch past it', async () => {
    const inFlight = new WritesInFlight(100);
    const [a, b, c] = [deferred(), deferred(), deferred()];
    await inFlight.add(a.promise, 60);
    await inFlight.add(b.promise, 40);
    let added = false;
    const third = inFlight.add(c.promise, 10).then(() => (added = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(added).toBe(false);
    a.resolve();
    await third;
    expect(added).toBe(true);
    let drained = false;
    const drain = inFlight.drain().then(() => (drained = true));
    b.resolve();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(drained).toBe(false);
    c.resolve();
    await drain;
  });

  it("rejects with a batch's failure, and a failure not yet awaited is not unhandled", async () => {
    const inFlight = new WritesInFlight(1_000);
    const [a, b] = [deferred(), deferred()];
    await inFlight.add(a.promise, 10);
    await inFlight.add(b.promise, 10);
    b.reject(new Error('SQLITE_FULL: database or disk is full'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    a.resolve();
    await expect(inFlight.drain()).rejects.toThrow('SQLITE_FULL');
  });
});

describe('an ingestion whose commit begins before its last files are read', () => {
  let dir: ReturnType<typeof tempDir>;
  let services: StudioServices;

  beforeEach(() => {
    dir = tempDir();
    services = openServices(join(dir.path, 'data'));
  });
  afterEach(() => {
    services.close();
    dir.remove();
  });

  it('writes every file exactly, the last ones streamed into the commit under way', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const listingId = services.listings.create({ title: 'KB', accessModel: 'one_time', price: 0 }, wallet).id;
    const write = (name: string, text: string) => {
      const path = join(dir.path, 'kb', name);
      writeFileSync(path, text);
      return path;
    };
    mkdirSync(join(dir.path, 'kb'));
    // Each CSV row is a chunk: 2,500 staged, then two small files, read once the commit has begun.
    const rows = (word: string, n: number) =>
      ['name,note', ...Array.from({ length: n }, (_, i) => `${word} ${i},the ${word} note ${i}`)].join('\n');
    write('a-rows.csv', rows('petrel', 2_500));
    write('b-notes.md', '# Shearwaters\n\nShearwaters glide low over the waves for hours.\n');
    write('c-more.csv', rows('fulmar', 40));

    const begun: number[] = [];
    const beginCommit = services.knowledgeBase.beginCommit.bind(services.knowledgeBase);
    vi.spyOn(services.knowledgeBase, 'beginCommit').mockImplementation((...args) => {
      // The documents staged by then.
      begun.push(args[1].documentCount);
      return beginCommit(...args);
    });
    const result = await services.ingestion.run({
      listingId,
      inputs: [{ path: join(dir.path, 'kb') }],
      atomic: true,
      limits: STUDIO_LIMITS,
    });
    // Begun once, after the first file, with two still to read.
    expect(begun).toEqual([1]);
    expect(result.documents.map((d) => [d.source, d.status, d.chunks])).toEqual([
      ['kb/a-rows.csv', 'ingested', 2_500],
      ['kb/b-notes.md', 'ingested', 1],
      ['kb/c-more.csv', 'ingested', 40],
    ]);
    expect(result).toMatchObject({ committed: true, documentCount: 3, chunkCount: 2_541 });
    // How long the commit held the write lock: from its BEGIN IMMEDIATE to its COMMIT, within the ingestion.
    expect(result.writeLockMs).toBeGreaterThan(0);
    expect(result.writeLockMs).toBeLessThanOrEqual(result.durationMs);

    const db = services.db;
    const texts = (source: string) =>
      db
        .prepare(
          `SELECT c.text FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.source = ? ORDER BY c.chunk_index`,
        )
        .pluck()
        .all(source) as string[];
    expect(texts('kb/b-notes.md')).toEqual([expect.stringContaining('Shearwaters glide low over the waves')]);
    expect(texts('kb/c-more.csv')).toHaveLength(40);
    expect(texts('kb/c-more.csv')[39]).toContain('fulmar 39');
    expect(texts('kb/a-rows.csv')[2_499]).toContain('petrel 2499');
    const fullText = (word: string) =>
      db.prepare(`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`).pluck().get(word);
    expect([fullText('petrel'), fullText('shearwaters'), fullText('fulmar')]).toEqual([2_500, 1, 40]);
    db.prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('integrity-check', 1)`).run();
    const vectors = db.prepare(`SELECT count(*) FROM embeddings`).pluck().get();
    expect(vectors).toBe(2_541);
    expect(services.listings.get(listingId, 'studio')).toMatchObject({ chunkCount: 2_541, documentCount: 3 });
  });
});
