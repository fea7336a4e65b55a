import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FieldFilter } from '../../../src/core/retrieve/filters';
import type { DenseHit } from '../../../src/core/retrieve/searchIndex';
import { HammingSpace } from '../../../src/core/retrieve/hammingKernel';
import { FilterColumnCache } from '../../../src/db/filterColumns';
import { VectorCodeCache } from '../../../src/db/vectorCodeCache';
import { SqliteDocumentRepository } from '../../../src/db/repositories/documents';
import { SqliteSearchRepository } from '../../../src/db/repositories/search';
import { openServices, type StudioServices } from '../../../src/db/services';
import { commitChunks } from '../../helpers/commitChunks';
import { tempDir } from '../../helpers/studio';
import { seededRng } from '../../../bench/prng';

const MODEL = 'test-clustered-256';
const DIMS = 256;
const CHUNKS = 20_000;
const TOP_K = 20;

/** mulberry32, the benchmark's generator: the same random data on every run. */
const rng = (seed: number) => seededRng(seed).next;

/** Seeded clustered unit vectors: a random centre each plus uniform noise, normalized. */
function clustered(seed: number, clusters: number) {
  const random = rng(seed);
  const uniform = (scale: number) => Float32Array.from({ length: DIMS }, () => (random() * 2 - 1) * scale);
  const centres = Array.from({ length: clusters }, () => uniform(1));
  return () => {
    const centre = centres[Math.floor(random() * clusters)]!;
    const v = uniform(0.8).map((x, i) => x + centre[i]!);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  };
}

const commit = (
  services: StudioServices,
  listingId: string,
  source: string,
  vectors: Float32Array[],
  first = 0,
) =>
  commitChunks(
    services,
    listingId,
    source,
    vectors.map((vector, i) => ({
      text: `chunk ${first + i} of ${source}`,
      tokenCount: 4,
      contentHash: `${source}-${i}`,
      metadata: { bucket: (first + i) % 100, tenth: (first + i) % 10 },
      vector,
    })),
    { id: MODEL, dimensions: DIMS },
  );

const recall = (exact: DenseHit[], approx: DenseHit[]) => {
  const found = new Set(approx.map((h) => h.id));
  return exact.filter((h) => found.has(h.id)).length / exact.length;
};

describe('dense search at scale (binary first pass, exact rescoring)', () => {
  const dir = tempDir();
  let services: StudioServices;
  let listingId: string;
  let search: SqliteSearchRepository;
  let exact: SqliteSearchRepository;
  const next = clustered(42, 40);
  const queries: Float32Array[] = [];

  beforeAll(async () => {
    services = openServices(dir.path);
    const wallet = services.wallets.defaultWallet().address;
    listingId = services.listings.create({ title: 'Dense', accessModel: 'one_time', price: 0 }, wallet).id;
    await commit(
      services,
      listingId,
      'base.jsonl',
      Array.from({ length: CHUNKS }, () => next()),
    );
    for (let i = 0; i < 20; i++) queries.push(next());
    search = new SqliteSearchRepository(services.db);
    exact = new SqliteSearchRepository(services.db, { exactBudget: Infinity });
  }, 60_000);

  afterAll(() => {
    services.close();
    dir.remove();
  });

  it('chooses the binary pass for a large knowledge base and exact search for a small one', async () => {
    expect(search.densePlan(listingId, MODEL)).toBe('binary');
    expect(exact.densePlan(listingId, MODEL)).toBe('exact');
    const wallet = services.wallets.defaultWallet().address;
    const small = services.listings.create({ title: 'Small', accessModel: 'one_time', price: 0 }, wallet).id;
    await commit(services, small, 'small.jsonl', queries.slice(0, 5));
    expect(search.densePlan(small, MODEL)).toBe('exact');
    const hits = search.denseSearch(small, MODEL, queries[0]!, [], 3);
    expect(hits[0]!.distance).toBeCloseTo(0, 5);
  });

  it('says how many results the dense search answers at the cost of topK: hybrid asks for that many first', () => {
    // 256 dimensions rescore at least 1,000 candidates (8 a result): 125 results cost what 21 cost.
    expect(search.denseLimitAtCost(listingId, MODEL, TOP_K + 1)).toBe(125);
    const wide = new SqliteSearchRepository(services.db, {
      candidates: (_d, limit) => Math.max(400, limit * 8),
    });
    expect(wide.denseLimitAtCost(listingId, MODEL, TOP_K + 1)).toBe(50);
    expect(wide.denseLimitAtCost(listingId, MODEL, 80)).toBe(80);
    // sqlite-vec's exact scan, and a model without vectors: any limit costs the same.
    expect(exact.denseLimitAtCost(listingId, MODEL, TOP_K + 1)).toBe(Infinity);
    expect(search.denseLimitAtCost(listingId, 'no-such-model', TOP_K + 1)).toBe(Infinity);
  });

  it('says once per search when the scan is done, before rescoring reads a vector (hybrid starts its full-text search there)', () => {
    const events: string[] = [];
    const scan = vi.spyOn(HammingSpace.prototype, 'distancesTo');
    const reads = vi.spyOn(
      search as unknown as { exactDistances: (...args: unknown[]) => unknown },
      'exactDistances',
    );
    try {
      const alone = () =>
        events.push(`alone after ${scan.mock.calls.length} scans, ${reads.mock.calls.length} reads`);
      search.denseSearch(listingId, MODEL, queries[5]!, [], TOP_K + 1, alone);
      expect(events).toEqual(['alone after 1 scans, 0 reads']);
      expect(reads).toHaveBeenCalled();
      // sqlite-vec's exact scan and a model without vectors: once each.
      events.length = 0;
      exact.denseSearch(listingId, MODEL, queries[5]!, [], TOP_K + 1, alone);
      search.denseSearch(listingId, 'no-such-model', queries[5]!, [], TOP_K + 1, alone);
      expect(events).toHaveLength(2);
    } finally {
      scan.mockRestore();
      reads.mockRestore();
    }
  });

  it('asked again for more by the same query (hybrid widening), scans once and reads only the candidates not yet scored', () => {
    const wide = new SqliteSearchRepository(services.db, {
      candidates: (_d, limit) => Math.max(400, limit * 8),
    });
    const scans = vi.spyOn(HammingSpace.prototype, 'distancesTo');
    const reads = vi.spyOn(
      wide as unknown as { exactDistances: (...args: unknown[]) => unknown },
      'exactDistances',
    );
    const read = () => reads.mock.calls.map((call) => (call[2] as number[]).length);
    try {
      const q = queries[3]!;
      const narrow = wide.denseSearch(listingId, MODEL, q, [], 50);
      const widened = wide.denseSearch(listingId, MODEL, q, [], 101);
      expect(scans).toHaveBeenCalledTimes(1);
      expect(read()).toEqual([400, 408]);
      // What a search that never saw the narrower one returns.
      const fresh = new SqliteSearchRepository(services.db, {
        candidates: (_d, limit) => Math.max(400, limit * 8),
      });
      expect(widened).toEqual(fresh.denseSearch(listingId, MODEL, q, [], 101));
      expect(widened.slice(0, 50)).toEqual(narrow);
      // Another query, or the same one under a filter, scans and reads anew.
      wide.denseSearch(listingId, MODEL, queries[4]!, [], 101);
      expect(scans).toHaveBeenCalledTimes(3);
      const half: FieldFilter[] = [{ key: 'tenth', conditions: [{ op: 'lt', value: 5 }] }];
      expect(wide.denseSearch(listingId, MODEL, q, half, 101)).toEqual(
        fresh.denseSearch(listingId, MODEL, q, half, 101),
      );
      expect(scans).toHaveBeenCalledTimes(5);
      expect(read().slice(2)).toEqual([808, 3232]);
    } finally {
      scans.mockRestore();
    }
  });

  it("scores hybrid's other candidates from the same query's rescoring where it read them, the rest from the blobs", () => {
    const repo = new SqliteSearchRepository(services.db, { exactBudget: 0 });
    const reads = vi.spyOn(
      repo as unknown as { exactDistances: (...args: unknown[]) => unknown },
      'exactDistances',
    );
    const read = () => reads.mock.calls.map((call) => [...(call[2] as number[])]);
    try {
      const q = queries[6]!;
      repo.denseSearch(listingId, MODEL, q, [], TOP_K + 1);
      const rescored = read()[0]!;
      // Chunks past the pool the search returned but among those it rescored, and others it never read.
      const inside = rescored.slice(-5);
      const allIds = services.db
        .prepare('SELECT id FROM chunks WHERE listing_id = ? ORDER BY id')
        .pluck()
        .all(listingId) as number[];
      const outside = allIds.filter((id) => !rescored.includes(id)).slice(0, 5);
      const asked = [...outside.slice(0, 2), ...inside, ...outside.slice(2)];
      const scores = repo.denseScores(listingId, MODEL, q, asked);
      expect(read().slice(1)).toEqual([outside]);
      // The same distances, in the order asked, as a repository that never searched reads them.
      expect(scores).toEqual(new SqliteSearchRepository(services.db).denseScores(listingId, MODEL, q, asked));
      expect(scores.map((h) => h.id)).toEqual(asked);
      // Another query reads them all.
      reads.mockClear();
      repo.denseScores(listingId, MODEL, queries[7]!, asked);
      expect(read()).toEqual([asked]);
    } finally {
      reads.mockRestore();
    }
  });

  it('scores again, not from the last search, once the knowledge base has changed', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const small = services.listings.create({ title: 'Reused', accessModel: 'one_time', price: 0 }, wallet).id;
    const everyTime = new SqliteSearchRepository(services.db, { exactBudget: 0 });
    const first = await commit(services, small, 'first.jsonl', queries.slice(0, 10));
    const reads = vi.spyOn(
      everyTime as unknown as { exactDistances: (...args: unknown[]) => unknown },
      'exactDistances',
    );
    const before = everyTime.denseSearch(small, MODEL, queries[0]!, [], 5);
    expect(before[0]!.distance).toBeCloseTo(0, 5);
    // The document replaced by other vectors: the same query must not see the old distances.
    new SqliteDocumentRepository(services.db).delete(first.documents[0]!.documentId);
    await commit(services, small, 'second.jsonl', queries.slice(10, 20));
    const after = everyTime.denseSearch(small, MODEL, queries[0]!, [], 5);
    expect(reads).toHaveBeenCalledTimes(2);
    expect(after).toEqual(
      new SqliteSearchRepository(services.db, { exactBudget: 0 }).denseSearch(
        small,
        MODEL,
        queries[0]!,
        [],
        5,
      ),
    );
    expect(after[0]!.distance).toBeGreaterThan(0.01);
  });

  it('finds the exact top 20 (recall >= 0.99 on seeded clustered vectors) with the same distances', () => {
    const recalls = queries.map((q) => {
      const want = exact.denseSearch(listingId, MODEL, q, [], TOP_K);
      const got = search.denseSearch(listingId, MODEL, q, [], TOP_K);
      expect(got).toHaveLength(TOP_K);
      // Shared chunks carry the very same distance (sqlite-vec's cosine on the same floats).
      const byId = new Map(want.map((h) => [h.id, h.distance]));
      for (const h of got) if (byId.has(h.id)) expect(h.distance).toBe(byId.get(h.id));
      for (let i = 1; i < got.length; i++)
        expect(got[i]!.distance).toBeGreaterThanOrEqual(got[i - 1]!.distance);
      return recall(want, got);
    });
    expect(recalls.reduce((a, b) => a + b, 0) / recalls.length).toBeGreaterThanOrEqual(0.99);
  });

  it('warms the codes ahead of the first query a slice at a time, leaving the event loop free', async () => {
    const fresh = new SqliteSearchRepository(services.db);
    let turns = 0;
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      turns++;
      setImmediate(spin);
    };
    spin();
    const warmed = await fresh.warmUp(1_000);
    spinning = false;
    expect(warmed).toContain(listingId);
    // 20 slices of 1,000 rows: the loop ran between them.
    expect(turns).toBeGreaterThanOrEqual(10);
    expect(fresh.denseSearch(listingId, MODEL, queries[2]!, [], TOP_K)).toEqual(
      search.denseSearch(listingId, MODEL, queries[2]!, [], TOP_K),
    );
  });

  it('lets a query wait for the codes the warm-up is reading, rather than read them all on its own thread', async () => {
    const fresh = new SqliteSearchRepository(services.db);
    const readAtOnce = vi.spyOn(VectorCodeCache.prototype as unknown as { load: () => unknown }, 'load');
    try {
      const codesReady = () => fresh.searchReady(listingId, MODEL, { lexical: false, dense: true });
      expect(codesReady()).toBeUndefined();
      const warming = fresh.warmUp(1_000);
      const ready = codesReady();
      expect(ready).toBeDefined();
      await ready;
      expect(fresh.denseSearch(listingId, MODEL, queries[3]!, [], TOP_K)).toEqual(
        search.denseSearch(listingId, MODEL, queries[3]!, [], TOP_K),
      );
      expect(readAtOnce).not.toHaveBeenCalled();
      expect(codesReady()).toBeUndefined();
      await warming;
    } finally {
      readAtOnce.mockRestore();
      fresh.close();
    }
  });

  it('gives the distances denseScores gives for the same chunks', () => {
    const got = search.denseSearch(listingId, MODEL, queries[1]!, [], 5);
    const scores = search.denseScores(
      listingId,
      MODEL,
      queries[1]!,
      got.map((h) => h.id),
    );
    expect(scores).toEqual(got);
  });

  it('returns topK chunks passing a filter that keeps 1% of the rows: the exact ones', () => {
    const filter: FieldFilter[] = [{ key: 'bucket', conditions: [{ op: 'eq', value: 7 }] }];
    const inBucket = new Set(
      services.db
        .prepare(`SELECT id FROM chunks WHERE listing_id = ? AND json_extract(metadata, '$.bucket') = 7`)
        .pluck()
        .all(listingId) as number[],
    );
    expect(inBucket.size).toBe(CHUNKS / 100);
    for (const q of queries.slice(0, 5)) {
      const got = search.denseSearch(listingId, MODEL, q, filter, TOP_K);
      expect(got).toHaveLength(TOP_K);
      expect(got.every((h) => inBucket.has(h.id))).toBe(true);
      expect(got).toEqual(exact.denseSearch(listingId, MODEL, q, filter, TOP_K));
    }
  });

  it("answers a filter of a new value from the key's column once read, as the SQL filter does", async () => {
    const fresh = new SqliteSearchRepository(services.db);
    const inSql = new SqliteSearchRepository(services.db, { filterColumnBytes: 0 });
    const fromColumns = vi.spyOn(FilterColumnCache.prototype, 'allowedIds');
    const bucket = (value: number): FieldFilter[] => [{ key: 'bucket', conditions: [{ op: 'eq', value }] }];
    const range = (low: number): FieldFilter[] => [
      {
        key: 'bucket',
        conditions: [
          { op: 'gte', value: low },
          { op: 'lt', value: low + 2 },
        ],
      },
      { key: 'tenth', conditions: [{ op: 'ne', value: low % 10 }] },
    ];
    // The first filter on a key is answered in SQL while the column is read.
    expect(fresh.denseSearch(listingId, MODEL, queries[0]!, bucket(3), TOP_K)).toEqual(
      inSql.denseSearch(listingId, MODEL, queries[0]!, bucket(3), TOP_K),
    );
    await fresh.filterColumnsRead();
    fresh.denseSearch(listingId, MODEL, queries[0]!, range(0), TOP_K);
    await fresh.filterColumnsRead();
    for (const [i, q] of queries.slice(0, 8).entries()) {
      for (const filters of [bucket(10 + i), range(20 + i)]) {
        const got = fresh.denseSearch(listingId, MODEL, q, filters, TOP_K);
        expect(got).toHaveLength(TOP_K);
        expect(got).toEqual(inSql.denseSearch(listingId, MODEL, q, filters, TOP_K));
      }
    }
    // The first two filters (one per new key) were answered in SQL, the 16 after them from the columns.
    const answers = fromColumns.mock.results.map((r) => (r.value === undefined ? 'sql' : 'columns'));
    fromColumns.mockRestore();
    expect(answers).toEqual([...Array<string>(2).fill('sql'), ...Array<string>(16).fill('columns')]);
  });

  it('reads ahead, started again or after a change, the columns of the keys recent queries filtered on', async () => {
    const logged = (filterKeys: string[], second: number) =>
      search.logQuery({
        id: `qry_ahead_${second}`,
        listingId,
        apiKeyId: null,
        wallet: null,
        query: 'q',
        topK: TOP_K,
        resultCount: TOP_K,
        latencyMs: 1,
        createdAt: new Date(Date.UTC(2026, 10, 29, 3, 0, second)).toISOString(),
        filterKeys,
      });
    logged(['tenth'], 1);
    logged([], 2);
    logged(['bucket', 'tenth'], 3);
    // Rows not written by the log (by hand) are passed over, and fail no query.
    logged(['x'], 4);
    logged(['y'], 5);
    const edit = services.db.prepare(`UPDATE query_log SET filter_keys = ? WHERE id = ?`);
    edit.run('not json', 'qry_ahead_4');
    edit.run('[1, {"k": 2}]', 'qry_ahead_5');
    const bucket = (value: number): FieldFilter[] => [{ key: 'bucket', conditions: [{ op: 'eq', value }] }];
    const tenth = (value: number): FieldFilter[] => [{ key: 'tenth', conditions: [{ op: 'eq', value }] }];
    const inSql = new SqliteSearchRepository(services.db, { filterColumnBytes: 0 });
    const fromColumns = vi.spyOn(FilterColumnCache.prototype, 'allowedIds');
    try {
      // As a server started again: the codes warmed, then the two keys' columns read.
      const restarted = new SqliteSearchRepository(services.db);
      expect(await restarted.warmUp()).toContain(listingId);
      for (const filters of [bucket(41), tenth(3)]) {
        expect(restarted.denseSearch(listingId, MODEL, queries[3]!, filters, TOP_K)).toEqual(
          inSql.denseSearch(listingId, MODEL, queries[3]!, filters, TOP_K),
        );
      }
      // A change drops the columns; the next query, filtered or not, has them read again.
      const added = await commit(services, listingId, 'ahead.jsonl', queries.slice(0, 2), CHUNKS + 100);
      restarted.denseSearch(listingId, MODEL, queries[4]!, [], TOP_K);
      await restarted.filterColumnsRead();
      expect(restarted.denseSearch(listingId, MODEL, queries[4]!, bucket(42), TOP_K)).toEqual(
        inSql.denseSearch(listingId, MODEL, queries[4]!, bucket(42), TOP_K),
      );
      new SqliteDocumentRepository(services.db).delete(added.documents[0]!.documentId);
      const answers = fromColumns.mock.results.map((r) => (r.value === undefined ? 'sql' : 'columns'));
      expect(answers).toEqual(['columns', 'columns', 'columns']);
    } finally {
      fromColumns.mockRestore();
    }
  });

  it('keeps to a broad filter (half the rows) through the code scan, with recall against exact', () => {
    const filter: FieldFilter[] = [{ key: 'tenth', conditions: [{ op: 'in', values: [0, 1, 2, 3, 4] }] }];
    const recalls = queries.slice(0, 5).map((q) => {
      const got = search.denseSearch(listingId, MODEL, q, filter, TOP_K);
      const want = exact.denseSearch(listingId, MODEL, q, filter, TOP_K);
      expect(got).toHaveLength(TOP_K);
      const tenths = services.db
        .prepare(
          `SELECT DISTINCT json_extract(metadata, '$.tenth') FROM chunks WHERE id IN (SELECT value FROM json_each(?))`,
        )
        .pluck()
        .all(JSON.stringify(got.map((h) => h.id))) as number[];
      expect(tenths.every((t) => t < 5)).toBe(true);
      return recall(want, got);
    });
    expect(Math.min(...recalls)).toBeGreaterThanOrEqual(0.95);
  });

  it('sees chunks committed after the codes were loaded, and never returns a deleted document', async () => {
    const q = queries[2]!;
    search.denseSearch(listingId, MODEL, q, [], TOP_K); // codes loaded and cached
    // Near-copies of the query: they must become the best hits once committed.
    const near = Array.from({ length: 3 }, (_, i) => q.map((x, j) => x + (j === i ? 0.001 : 0)));
    const added = await commit(services, listingId, 'late.jsonl', near, CHUNKS);
    const lateIds = new Set(
      services.db
        .prepare(`SELECT id FROM chunks WHERE document_id = ?`)
        .pluck()
        .all(added.documents[0]!.documentId) as number[],
    );
    const after = search.denseSearch(listingId, MODEL, q, [], TOP_K);
    expect(new Set(after.slice(0, 3).map((h) => h.id))).toEqual(lateIds);

    new SqliteDocumentRepository(services.db).delete(added.documents[0]!.documentId);
    const afterDelete = search.denseSearch(listingId, MODEL, q, [], TOP_K);
    expect(afterDelete).toHaveLength(TOP_K);
    expect(afterDelete.some((h) => lateIds.has(h.id))).toBe(false);
    expect(afterDelete).toEqual(exact.denseSearch(listingId, MODEL, q, [], TOP_K));
  });

  it('takes the exact path, once per change, when some vectors have no code; warms only whole sets', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const partial = services.listings.create(
      { title: 'Partial', accessModel: 'one_time', price: 0 },
      wallet,
    ).id;
    await commit(
      services,
      partial,
      'partial.jsonl',
      Array.from({ length: 600 }, () => next()),
    );
    services.db.prepare(`DELETE FROM vector_codes WHERE listing_id = ? AND chunk_id % 7 = 0`).run(partial);
    const fresh = new SqliteSearchRepository(services.db, { exactBudget: 0 });
    const codes = vi.spyOn(
      (fresh as unknown as { codes: { load: (...args: unknown[]) => unknown } }).codes,
      'load',
    );
    try {
      expect(await fresh.warmUp()).not.toContain(partial);
      expect(fresh.densePlan(partial, MODEL)).toBe('exact');
      const q = queries[2]!;
      expect(fresh.denseSearch(partial, MODEL, q, [], TOP_K)).toEqual(
        exact.denseSearch(partial, MODEL, q, [], TOP_K),
      );
      // Loaded once: the answer "exact" holds until the knowledge base changes.
      expect(codes).toHaveBeenCalledTimes(1);
    } finally {
      codes.mockRestore();
    }
  });

  it('falls back to exact search when vectors were written without codes (an older knowledge base)', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const old = services.listings.create({ title: 'Old', accessModel: 'one_time', price: 0 }, wallet).id;
    const vectors = Array.from({ length: 1_000 }, () => next());
    await commit(services, old, 'old.jsonl', vectors);
    services.db.prepare(`DELETE FROM vector_codes WHERE listing_id = ?`).run(old);
    services.db
      .prepare(`DELETE FROM embeddings WHERE chunk_id IN (SELECT id FROM chunks WHERE listing_id = ?)`)
      .run(old);
    const fresh = new SqliteSearchRepository(services.db, { exactBudget: 0 });
    expect(fresh.densePlan(old, MODEL)).toBe('exact');
    expect(fresh.densePlan(listingId, MODEL)).toBe('binary');
    const got = fresh.denseSearch(old, MODEL, queries[3]!, [], TOP_K);
    expect(got).toEqual(exact.denseSearch(old, MODEL, queries[3]!, [], TOP_K));
    // denseScores still reads the vec0 table for such chunks.
    expect(fresh.denseScores(old, MODEL, queries[3]!, [got[0]!.id])).toEqual([got[0]]);
    // A filter keeping fewer than topK: chunks in vec0 alone have a vector, so nothing is added.
    const bucket: FieldFilter[] = [{ key: 'bucket', conditions: [{ op: 'eq', value: 3 }] }];
    const filtered = fresh.denseSearch(old, MODEL, queries[3]!, bucket, TOP_K);
    expect(filtered).toHaveLength(10);
    expect(new Set(filtered.map((h) => h.id)).size).toBe(10);
  });

  it('follows the chunks with a vector by those without one (zero vectors), at distance 1, when fewer pass', async () => {
    const wallet = services.wallets.defaultWallet().address;
    const mixed = services.listings.create({ title: 'Blanks', accessModel: 'one_time', price: 0 }, wallet).id;
    const zero = new Float32Array(DIMS);
    const vectors = Array.from({ length: 3_000 }, (_, i) => (i % 500 === 7 ? zero : next()));
    await commit(services, mixed, 'blanks.jsonl', vectors);
    const ids = services.db
      .prepare(`SELECT id FROM chunks WHERE listing_id = ? ORDER BY id`)
      .pluck()
      .all(mixed) as number[];
    const blanks = ids.filter((_, i) => i % 500 === 7);
    expect(blanks).toHaveLength(6);
    const q = queries[4]!;
    // bucket 7: 30 chunks, 6 of them without a vector.
    const bucket: FieldFilter[] = [{ key: 'bucket', conditions: [{ op: 'eq', value: 7 }] }];
    for (const repo of [new SqliteSearchRepository(services.db, { exactBudget: 0 }), exact]) {
      const all = repo.denseSearch(mixed, MODEL, q, bucket, 40);
      expect(all).toHaveLength(30);
      expect(all.slice(24)).toEqual(blanks.map((id) => ({ id, distance: 1 })));
      expect(all.slice(0, 24).some((h) => blanks.includes(h.id))).toBe(false);
      // Enough chunks with a vector pass: none without one is added.
      expect(repo.denseSearch(mixed, MODEL, q, bucket, 20).some((h) => blanks.includes(h.id))).toBe(false);
    }
  });
});
