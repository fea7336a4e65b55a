import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareUtf8 } from '../../src/core/retrieve/filterElements';
import type { FieldFilter, FilterCondition, FilterScalar } from '../../src/core/retrieve/filters';
import { FilterColumnCache } from '../../src/db/filterColumns';
import { filterSql, SqliteSearchRepository } from '../../src/db/repositories/search';
import { openServices, type StudioServices } from '../../src/db/services';
import { seededRng, type Rng } from '../../bench/prng';
import { commitChunks } from '../helpers/commitChunks';
import { tempDir } from '../helpers/studio';

const MODEL = 'test-filters-4';
const DIMS = 4;

/** Scalars chosen where SQL and JavaScript could disagree: numeric strings, -0, code point order, ... */
const SCALARS: FilterScalar[] = [
  'a',
  'b',
  'B',
  '',
  ' 12 ',
  '12',
  '1e2',
  '0x10',
  '3.5',
  '-0',
  'é',
  'e\u0301',
  '\uE000',
  '😀',
  '\uFFFD',
  'a b',
  12,
  100,
  3.5,
  -1,
  0,
  -0,
  1e21,
  Number.MAX_SAFE_INTEGER + 2,
  true,
  false,
];

function randomValue(rng: Rng, depth = 0): unknown {
  const roll = rng.int(10);
  if (roll < 6 || depth > 1) return rng.pick(SCALARS);
  if (roll === 6) return null;
  if (roll === 7) return {};
  if (roll === 8) return Array.from({ length: rng.int(4) }, () => randomValue(rng, depth + 1)); // [] included
  return { x: randomValue(rng, depth + 1), y: rng.pick(SCALARS) };
}

const KEYS = ['k', 'tags', 'a.b', 'q"uote'];

function randomMetadata(rng: Rng): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (const key of KEYS) if (rng.chance(0.75)) metadata[key] = randomValue(rng);
  return metadata;
}

function randomCondition(rng: Rng): FilterCondition {
  const scalar = () => rng.pick(SCALARS);
  const ordered = () => rng.pick(SCALARS.filter((s) => typeof s !== 'boolean')) as string | number;
  const list = () => Array.from({ length: rng.int(4) }, scalar);
  switch (rng.int(9)) {
    case 0:
      return { op: 'eq', value: scalar() };
    case 1:
      return { op: 'ne', value: scalar() };
    case 2:
      return { op: 'gt', value: ordered() };
    case 3:
      return { op: 'gte', value: ordered() };
    case 4:
      return { op: 'lt', value: ordered() };
    case 5:
      return { op: 'lte', value: ordered() };
    case 6:
      return { op: 'in', values: list() };
    case 7:
      return { op: 'nin', values: list() };
    default:
      return { op: 'exists', value: rng.chance(0.5) };
  }
}

function randomFilters(rng: Rng): FieldFilter[] {
  const keys = rng.shuffled([...KEYS, 'missing']).slice(0, 1 + rng.int(2));
  return keys.sort().map((key) => ({
    key,
    conditions: Array.from({ length: 1 + rng.int(2) }, () => randomCondition(rng)),
  }));
}

const commit = (services: StudioServices, listingId: string, source: string, metadata: object[]) =>
  commitChunks(
    services,
    listingId,
    source,
    metadata.map((m, i) => ({
      text: `chunk ${i} of ${source}`,
      tokenCount: 4,
      contentHash: `${source}-${i}`,
      metadata: m as Record<string, unknown>,
      vector: Float32Array.from({ length: DIMS }, (_v, d) => Math.sin(i + d + 1)),
    })),
    { id: MODEL, dimensions: DIMS },
  );

const generationOf = (services: StudioServices) => (listing: string) =>
  (services.db
    .prepare(`SELECT generation FROM knowledge_base_generations WHERE listing_id = ?`)
    .pluck()
    .get(listing) as number | undefined) ?? 0;

/** The cache's answer once the columns the filters need are read (the first call starts reading them). */
async function evaluate(
  columns: FilterColumnCache,
  listing: string,
  generation: number,
  filters: FieldFilter[],
) {
  const first = columns.allowedIds(listing, generation, filters);
  if (first !== undefined) return first;
  await columns.settled();
  return columns.allowedIds(listing, generation, filters);
}

/** Counts the column readings begun on the database's connection (one statement each). */
function countColumnReads(services: StudioServices): (() => number) & { restore: () => void } {
  let count = 0;
  const prepare = services.db.prepare.bind(services.db);
  services.db.prepare = ((sql: string) => {
    if (sql.includes('LEFT JOIN json_each(c.metadata, @path)')) count++;
    return prepare(sql);
  }) as typeof services.db.prepare;
  return Object.assign(() => count, { restore: () => (services.db.prepare = prepare) });
}

describe('metadata filters over in-memory columns (FilterColumnCache)', () => {
  const dir = tempDir();
  let services: StudioServices;
  let listingId: string;
  let other: string;
  const generation = () => generationOf(services)(listingId);
  const inSql = (listing: string, filters: FieldFilter[]) => {
    const where = filterSql(filters);
    return services.db
      .prepare(`SELECT c.id FROM chunks c WHERE c.listing_id = ? AND ${where.sql} ORDER BY c.id`)
      .pluck()
      .all(listing, ...where.params) as number[];
  };

  beforeAll(async () => {
    services = openServices(dir.path);
    new SqliteSearchRepository(services.db); // registers kbs_filter_number, which filterSql calls
    const wallet = services.wallets.defaultWallet().address;
    listingId = services.listings.create({ title: 'Filters', accessModel: 'one_time', price: 0 }, wallet).id;
    other = services.listings.create({ title: 'Other', accessModel: 'one_time', price: 0 }, wallet).id;
    const rng = seededRng(7);
    await commit(
      services,
      listingId,
      'a.jsonl',
      Array.from({ length: 1_500 }, () => randomMetadata(rng)),
    );
    await commit(
      services,
      other,
      'b.jsonl',
      Array.from({ length: 300 }, () => randomMetadata(rng)),
    );
  }, 60_000);

  afterAll(() => {
    services.close();
    dir.remove();
  });

  it('orders texts by code point, as SQLite compares UTF-8 bytes', () => {
    const texts = SCALARS.filter((s): s is string => typeof s === 'string');
    for (const a of texts) {
      for (const b of texts) {
        const sql = services.db
          .prepare(`SELECT CASE WHEN ? < ? THEN -1 WHEN ? > ? THEN 1 ELSE 0 END`)
          .pluck();
        expect(Math.sign(compareUtf8(a, b)), `${a} vs ${b}`).toBe(sql.get(a, b, a, b));
      }
    }
  });

  it('selects exactly the chunks the SQL selects, for 600 random filters on random metadata', async () => {
    const columns = new FilterColumnCache(services.db, generationOf(services), { sliceChunks: 64 });
    const rng = seededRng(11);
    let nonEmpty = 0;
    let partial = 0;
    for (let round = 0; round < 600; round++) {
      const filters = randomFilters(rng);
      const listing = round % 5 === 4 ? other : listingId;
      const gen = generationOf(services)(listing);
      const want = inSql(listing, filters);
      expect(await evaluate(columns, listing, gen, filters), JSON.stringify(filters)).toEqual(want);
      if (want.length > 0) nonEmpty++;
      if (want.length > 0 && want.length < 1_500 / 2) partial++;
    }
    // The filters are not all trivially empty or full: the comparison means something.
    expect(nonEmpty).toBeGreaterThan(300);
    expect(partial).toBeGreaterThan(150);
  });

  it('answers undefined until a column is read, in slices with the event loop turning, then from memory', async () => {
    const columns = new FilterColumnCache(services.db, generationOf(services), { sliceChunks: 100 });
    const gen = generation();
    const filters: FieldFilter[] = [{ key: 'k', conditions: [{ op: 'eq', value: 'a' }] }];
    expect(columns.allowedIds(listingId, gen, filters)).toBeUndefined();
    // Counted once per turn of the event loop, however fast the machine (a timer of 1 ms counted 3 turns
    // where the 15 slices took 3 ms).
    let turns = 0;
    let ticking = setImmediate(function tick() {
      turns++;
      ticking = setImmediate(tick);
    });
    await columns.settled();
    clearImmediate(ticking);
    // 1,500 chunks in slices of 100: the event loop ran between them.
    expect(turns).toBeGreaterThan(3);

    const reads: string[] = [];
    const prepare = services.db.prepare.bind(services.db);
    services.db.prepare = ((sql: string) => {
      reads.push(sql);
      return prepare(sql);
    }) as typeof services.db.prepare;
    try {
      for (const value of SCALARS) {
        const single: FieldFilter[] = [{ key: 'k', conditions: [{ op: 'eq', value }] }];
        expect(columns.allowedIds(listingId, gen, single)).toEqual(inSql(listingId, single));
      }
    } finally {
      services.db.prepare = prepare;
    }
    // Every value above was answered without a statement of the cache's own (inSql's are counted apart).
    expect(reads.filter((sql) => !sql.includes('WHERE c.listing_id = ? AND'))).toEqual([]);
  });

  it('drops a column read while the knowledge base changed, and reads the new generation with its chunks', async () => {
    const columns = new FilterColumnCache(services.db, generationOf(services), { sliceChunks: 100 });
    const filters: FieldFilter[] = [
      { key: 'k', conditions: [{ op: 'in', values: ['a', 12] }] },
      { key: 'tags', conditions: [{ op: 'exists', value: true }] },
    ];
    const before = generation();
    expect(columns.allowedIds(listingId, before, filters)).toBeUndefined();
    // A few slices in, the knowledge base changes (as a document written or deleted bumps it).
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    services.db
      .prepare(`UPDATE knowledge_base_generations SET generation = generation + 1 WHERE listing_id = ?`)
      .run(listingId);
    await columns.settled();
    // What was read belongs to no one generation: nothing was kept for the old one.
    expect(columns.allowedIds(listingId, before, filters)).toBeUndefined();
    await columns.settled();

    await commit(services, listingId, 'late.jsonl', [{ k: 'a', tags: [] }, { k: 12 }, { k: 'zz' }]);
    const after = await evaluate(columns, listingId, generation(), filters);
    expect(after).toEqual(inSql(listingId, filters));
    const [zz, twelve, a] = services.db
      .prepare(`SELECT id FROM chunks WHERE listing_id = ? ORDER BY id DESC LIMIT 3`)
      .pluck()
      .all(listingId) as number[];
    expect(after).toContain(a); // {k: 'a', tags: []}: an empty array exists
    expect(after).not.toContain(twelve); // no tags
    expect(after).not.toContain(zz);
  });

  it('leaves to SQL a filter whose columns its budget cannot hold together', async () => {
    const columns = new FilterColumnCache(services.db, generationOf(services), {
      sliceChunks: 500,
      maxBytes: 1,
    });
    const filters: FieldFilter[] = [
      { key: 'k', conditions: [{ op: 'eq', value: 'a' }] },
      { key: 'tags', conditions: [{ op: 'exists', value: false }] },
    ];
    expect(await evaluate(columns, listingId, generation(), filters)).toBeUndefined();
    await columns.settled();
    // One key alone fits (the newest column is always kept).
    const one: FieldFilter[] = [filters[1]!];
    expect(await evaluate(columns, listingId, generation(), one)).toEqual(inSql(listingId, one));
  });

  it('reads ahead the keys it is given, one after another, then answers filters on them from memory', async () => {
    const columns = new FilterColumnCache(services.db, generationOf(services), { aheadSliceChunks: 100 });
    const reads = countColumnReads(services);
    try {
      const gen = generation();
      columns.prefetch(listingId, gen, ['k', 'tags']);
      // 15 slices of the first key: the second is not read meanwhile.
      for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
      expect(reads()).toBe(1);
      await columns.settled();
      expect(reads()).toBe(2);
      const filters: FieldFilter[] = [
        { key: 'k', conditions: [{ op: 'ne', value: 'a' }] },
        { key: 'tags', conditions: [{ op: 'exists', value: true }] },
      ];
      expect(columns.allowedIds(listingId, gen, filters)).toEqual(inSql(listingId, filters));
      // Read already at this generation: nothing read again.
      columns.prefetch(listingId, gen, ['tags', 'k']);
      await columns.settled();
      expect(reads()).toBe(2);
    } finally {
      reads.restore();
    }
  });

  it('reads ahead only while searches leave the thread idle, unless a filter asks for the key meanwhile', async () => {
    const gen = generation();
    const filters: FieldFilter[] = [{ key: 'k', conditions: [{ op: 'eq', value: 'b' }] }];
    let busy = true;
    /** A reading ahead of 'k' while searches run: one ending just now at every look while busy. */
    const readingAhead = () => {
      const columns = new FilterColumnCache(services.db, generationOf(services), {
        aheadSliceChunks: 100,
        idleMs: 20,
        lastSearchAt: () => (busy ? performance.now() : -Infinity),
      });
      columns.prefetch(listingId, gen, ['k']);
      return columns;
    };
    const stillReading = (columns: FilterColumnCache) =>
      Promise.race([
        columns.settled().then(() => false),
        new Promise<true>((resolve) => setTimeout(() => resolve(true), 300)),
      ]);

    const idleLater = readingAhead();
    expect(await stillReading(idleLater)).toBe(true);
    busy = false;
    await idleLater.settled();
    expect(idleLater.allowedIds(listingId, gen, filters)).toEqual(inSql(listingId, filters));

    busy = true;
    const asked = readingAhead();
    expect(await stillReading(asked)).toBe(true);
    // Still busy: the filter is answered in SQL, and the reading it asked for no longer waits.
    expect(asked.allowedIds(listingId, gen, filters)).toBeUndefined();
    await asked.settled();
    expect(asked.allowedIds(listingId, gen, filters)).toEqual(inSql(listingId, filters));
  });

  it('never pushes out a column a filter used to read one ahead; one that does not fit ends the reading ahead', async () => {
    const columns = new FilterColumnCache(services.db, generationOf(services), {
      sliceChunks: 500,
      maxBytes: 1,
    });
    const reads = countColumnReads(services);
    try {
      const gen = generation();
      const used: FieldFilter[] = [{ key: 'k', conditions: [{ op: 'eq', value: 12 }] }];
      expect(await evaluate(columns, listingId, gen, used)).toEqual(inSql(listingId, used));
      columns.prefetch(listingId, gen, ['tags', 'a.b']);
      await columns.settled();
      // 'tags' was read, did not fit beside 'k' and was dropped; 'a.b' was not read.
      expect(reads()).toBe(2);
      expect(columns.allowedIds(listingId, gen, used)).toEqual(inSql(listingId, used));
      const ahead: FieldFilter[] = [{ key: 'tags', conditions: [{ op: 'exists', value: true }] }];
      expect(columns.allowedIds(listingId, gen, ahead)).toBeUndefined();
      await columns.settled();
    } finally {
      reads.restore();
    }
  });

  it('ends a reading that fails (a closed database, malformed metadata) quietly: SQL decides', async () => {
    const second = openServices(join(dir.path, 'second'));
    try {
      const wallet = second.wallets.defaultWallet().address;
      const listing = second.listings.create(
        { title: 'Broken', accessModel: 'one_time', price: 0 },
        wallet,
      ).id;
      await commit(
        second,
        listing,
        'c.jsonl',
        Array.from({ length: 500 }, (_v, i) => ({ k: i % 3 })),
      );
      const gen = generationOf(second)(listing);
      const filters: FieldFilter[] = [{ key: 'k', conditions: [{ op: 'eq', value: 1 }] }];
      second.db
        .prepare(`UPDATE chunks SET metadata = '{"k": ' WHERE id = (SELECT max(id) FROM chunks)`)
        .run();
      const columns = new FilterColumnCache(second.db, generationOf(second), { sliceChunks: 50 });
      expect(columns.allowedIds(listing, gen, filters)).toBeUndefined();
      await expect(columns.settled()).resolves.toBeUndefined();
      expect(columns.allowedIds(listing, gen, filters)).toBeUndefined();
      await columns.settled();

      expect(columns.allowedIds(listing, gen, filters)).toBeUndefined();
      second.close();
      await expect(columns.settled()).resolves.toBeUndefined();
    } finally {
      if (second.db.open) second.close();
    }
  });
});
