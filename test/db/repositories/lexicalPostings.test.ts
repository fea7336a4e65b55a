import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import type { FieldFilter } from '../../../src/core/retrieve/filters';
import { LexicalPostings } from '../../../src/core/retrieve/lexicalPostings';
import { LexicalThread, lexicalThread } from '../../../src/core/retrieve/lexicalThread';
import { lexicalPhrases, weightedPhrases } from '../../../src/core/retrieve/scoring';
import type { LexicalHit } from '../../../src/core/retrieve/searchIndex';
import { FilterColumnCache } from '../../../src/db/filterColumns';
import { openDatabase } from '../../../src/db/open';
import { SqliteDocumentRepository } from '../../../src/db/repositories/documents';
import { SqliteSearchRepository } from '../../../src/db/repositories/search';
import { buildKnowledgeBase, type TestKnowledgeBase } from '../../core/retrieve/knowledgeBase';

/**
 * The in-memory postings (LexicalIndexCache, read by the worker thread from FTS5's own index) answer
 * full-text search exactly as FTS5 does: the same rows in the same order with the same BM25, the same
 * statistics, with and without filters, in a listing that shares the index with another; and never
 * from a snapshot the knowledge base has moved past.
 */
let kb: TestKnowledgeBase;
let other: string;
/** A listing without documents. */
let empty: string;
let fts: SqliteSearchRepository;
let mem: SqliteSearchRepository;

/** Sentences repeated over the generated items, so many chunks are identical and tie. */
const SENTENCES = [
  'The running foxes crossed the frozen river at dawn.',
  'A small café near the station serves strong coffee.',
  'CAFÉ owners said the cafe was running out of milk.',
  'Foxes and dogs run together in the snowy field.',
  'Order 42 shipped in 2019 with 7 boxes of apples and 007 labels.',
  'The naïve résumé mentioned Zürich and São Paulo.',
  'Budget meetings ran long; the committee runs again tomorrow.',
  'The the the of a an and in on at to.',
  // Terms whose UTF-8 order differs from JavaScript's (UTF-16) order: FTS5 keeps the bytes' order.
  'Rare glyphs 𠀀𠀁 and ｚｅｎ fullwidth letters beside 日本語 text.',
];

const QUERIES = [
  'running foxes',
  'CAFÉ café',
  'cafe café Cafe',
  'run running runs ran',
  'Foxes foxes FOXES fox',
  '42 2019 7 007',
  'zürich sao paulo',
  'naive resume',
  'brown dog',
  'the',
  'the of and a',
  'quartzite nonexistentword',
  'the quick brown fox jumps over the lazy dog',
  'budget committee tomorrow',
  'galaxy telescope budget',
  'item number 120',
  'apples coffee milk strong',
  'shares banks river',
  'AND OR NOT NEAR',
  '𠀀𠀁 ｚｅｎ 日本語 glyphs',
];

const FILTERS: FieldFilter[][] = [
  [{ key: 'group', conditions: [{ op: 'eq', value: 2 }] }],
  [
    { key: 'parity', conditions: [{ op: 'in', values: ['odd'] }] },
    { key: 'score', conditions: [{ op: 'gte', value: 6 }] },
  ],
  [{ key: 'topic', conditions: [{ op: 'eq', value: 'animals' }] }],
  [{ key: 'tags', conditions: [{ op: 'exists', value: true }] }],
  [{ key: 'group', conditions: [{ op: 'eq', value: 99 }] }],
];

/** The same keys with other values: filters no repository has evaluated yet. */
const OTHER_FILTERS: FieldFilter[][] = [
  [{ key: 'group', conditions: [{ op: 'in', values: [1, 3] }] }],
  [
    { key: 'parity', conditions: [{ op: 'eq', value: 'even' }] },
    { key: 'score', conditions: [{ op: 'lt', value: 6 }] },
  ],
  [{ key: 'topic', conditions: [{ op: 'ne', value: 'animals' }] }],
  [{ key: 'tags', conditions: [{ op: 'exists', value: false }] }],
];

const LIMITS = [1, 2, 5, 20, 1000];

const generated = (count: number, offset: number) =>
  Array.from({ length: count }, (_, i) => ({
    text:
      SENTENCES[i % SENTENCES.length]! +
      (i % 3 === 0 ? ` ${SENTENCES[(i * 2) % SENTENCES.length]}` : '') +
      (i % 40 === 0 ? ` Item number ${i + offset}.` : ''),
    group: i % 5,
    parity: i % 2 === 0 ? 'even' : 'odd',
    score: i % 13,
  }));

async function ingest(listingId: string, file: string, items: object[]): Promise<void> {
  const path = join(dirname(kb.services.dataDir), file);
  writeFileSync(path, JSON.stringify(items));
  await kb.services.ingestion.run({ listingId, inputs: [{ path }], atomic: true, limits: STUDIO_LIMITS });
}

beforeAll(async () => {
  kb = await buildKnowledgeBase();
  // A second listing of generated items, then more of the first: its rowid window holds the other's rows.
  other = await kb.addListing(generated(300, 0), 'other.json');
  await ingest(kb.listingId, 'more.json', generated(60, 1000));
  empty = kb.services.listings.create({ title: 'Empty', accessModel: 'one_time', price: 1 }, kb.wallet).id;
  fts = new SqliteSearchRepository(kb.services.db, { lexical: { minRows: Infinity } });
  mem = new SqliteSearchRepository(kb.services.db, { lexical: { minRows: 0 } });
});
afterAll(() => {
  fts.close();
  mem.close();
  kb.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * Same ids in the same order, each BM25 the same double: the postings compute FTS5's operations in its
 * order, with its logarithm (SQLite's ln()).
 */
function expectSameHits(got: LexicalHit[], want: LexicalHit[], label: string) {
  expect(got, label).toEqual(want);
}

const byId = (hits: LexicalHit[]) => [...hits].sort((a, b) => a.id - b.id);

const listingIds = (listingId: string) =>
  kb.services.db
    .prepare(`SELECT id FROM chunks WHERE listing_id = ? ORDER BY id`)
    .pluck()
    .all(listingId) as number[];

/** Every comparison of FTS5's repository and one answering from postings (`memory`), for one query in one listing. */
function expectSameAnswers(
  query: string,
  listingId: string,
  filterSets: FieldFilter[][] = [[]],
  memory = mem,
) {
  const phrases = lexicalPhrases(query);
  const label = `${listingId}: ${query}`;
  const statsFts = fts.lexicalStats(phrases, listingId);
  const statsMem = memory.lexicalStats(phrases, listingId);
  expect(statsMem.rows, label).toBe(statsFts.rows);
  expect(statsMem.inListing, label).toEqual(statsFts.inListing);
  // FTS5's counts stop at half the rows; below that they are exact.
  const cap = Math.ceil(statsFts.rows / 2);
  statsFts.docFreq.forEach((n, i) => {
    if (n < cap) expect(statsMem.docFreq[i], `${label}: docFreq of ${phrases[i]}`).toBe(n);
    else expect(statsMem.docFreq[i], `${label}: docFreq of ${phrases[i]}`).toBeGreaterThanOrEqual(cap);
  });
  const weighted = weightedPhrases(phrases, statsFts);
  expect(weightedPhrases(phrases, statsMem), label).toEqual(weighted);
  const weightedOnly = weighted.map((w) => w.phrase);
  const searches = weightedOnly.join() === phrases.join() ? [phrases] : [phrases, weightedOnly];
  for (const searched of searches) {
    for (const filters of filterSets) {
      for (const limit of LIMITS) {
        const want = fts.lexicalSearch(listingId, searched, filters, limit);
        const at = `${label} [${searched.join(' ')}] ${JSON.stringify(filters)} limit ${limit}`;
        expectSameHits(memory.lexicalSearch(listingId, searched, filters, limit), want, at);
        // As hybrid asks it: on the lexical thread once that has started.
        expectSameHits(
          memory.startLexicalSearch(listingId, searched, filters, limit)(),
          want,
          `${at}, started`,
        );
      }
    }
  }
  // Chunks of both listings, some matching nothing, ids of no chunk, and two ids asked twice (each
  // found chunk comes back once, as FTS5's IN (…) gives it).
  const found = fts.lexicalSearch(listingId, phrases, [], 1000).map((h) => h.id);
  const ids = new Set([
    ...found.slice(0, 7),
    ...listingIds(kb.listingId).slice(0, 12),
    ...listingIds(other).slice(-12),
    ...found.slice(-3),
    0,
    1_000_000,
  ]);
  const asked = [...ids, ...found.slice(0, 2)];
  expectSameHits(
    byId(memory.lexicalScores(phrases, asked)),
    byId(fts.lexicalScores(phrases, asked)),
    `${label}: scores`,
  );
}

function expectSameAnswersEverywhere(filterSets?: FieldFilter[][], memory = mem) {
  for (const listingId of [kb.listingId, other, empty]) {
    for (const query of QUERIES) expectSameAnswers(query, listingId, filterSets, memory);
  }
}

describe('full-text search from the in-memory postings', () => {
  it('builds the postings on the worker thread, only for the repository that asks for them', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    expect(mem.lexical.postings(() => 0)).toBeDefined();
    expect(await fts.lexicalBuilt()).toBe(false);
    expect(fts.lexical.postings(() => 0)).toBeUndefined();
    const postings = mem.lexical.postings(() => 0)!;
    const chunks = kb.services.db.prepare(`SELECT count(*) FROM chunks`).pluck().get() as number;
    expect(postings.rows).toBe(chunks);
    expect(postings.listingChunks(other)).toBe(300);
    expect(postings.listingChunks(kb.listingId)).toBe(chunks - 300);
  });

  it('has ties and more matches than the smaller limits (the cases the comparison must cover)', () => {
    const hits = fts.lexicalSearch(other, lexicalPhrases('running foxes'), [], 1000);
    expect(hits.length).toBeGreaterThan(LIMITS.at(-2)!);
    const ties = hits.filter((h, i) => i > 0 && h.bm25 === hits[i - 1]!.bm25).length;
    expect(ties).toBeGreaterThan(10);
    // The first listing's window holds rows of the other.
    const mine = listingIds(kb.listingId);
    expect(listingIds(other).some((id) => id > mine[0]! && id < mine.at(-1)!)).toBe(true);
  });

  it('answers every query in both listings as FTS5 does, from the postings', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    const search = vi.spyOn(LexicalPostings.prototype, 'search');
    const scores = vi.spyOn(LexicalPostings.prototype, 'scoresOf');
    expectSameAnswersEverywhere();
    expect(search.mock.calls.length).toBeGreaterThan(QUERIES.length * LIMITS.length);
    expect(scores).toHaveBeenCalled();
    // FTS5's repository never reads them.
    search.mockClear();
    fts.lexicalSearch(other, lexicalPhrases('running foxes'), [], 10);
    expect(search).not.toHaveBeenCalled();
  });

  it('answers as FTS5 does under metadata filters that keep some rows or none', () => {
    const search = vi.spyOn(LexicalPostings.prototype, 'search');
    expectSameAnswersEverywhere(FILTERS);
    expect(search).toHaveBeenCalled();
    const kept = fts.lexicalSearch(other, lexicalPhrases('running foxes'), FILTERS[0]!, 1000);
    const all = fts.lexicalSearch(other, lexicalPhrases('running foxes'), [], 1000);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(all.length);
  });

  it('filters from the metadata columns in memory as from SQL', async () => {
    const fresh = new SqliteSearchRepository(kb.services.db, { lexical: { minRows: 0 } });
    try {
      expect(await fresh.lexicalBuilt()).toBe(true);
      const search = vi.spyOn(LexicalPostings.prototype, 'search');
      const columns = vi.spyOn(FilterColumnCache.prototype, 'allowedIds');
      // The first filters on each key are evaluated in SQL while the key's column is read.
      expectSameAnswersEverywhere(FILTERS, fresh);
      await fresh.filterColumnsRead();
      columns.mockClear();
      expectSameAnswersEverywhere(OTHER_FILTERS, fresh);
      expect(search).toHaveBeenCalled();
      expect(columns.mock.results.some((r) => r.value !== undefined)).toBe(true);
    } finally {
      fresh.close();
    }
  });

  it('leaves a phrase of several tokens to FTS5, with the same answer', () => {
    const search = vi.spyOn(LexicalPostings.prototype, 'search');
    const phrases = ['"e-mail"', '"foxes"'];
    expect(mem.lexical.terms(phrases)).toBeUndefined();
    for (const listingId of [kb.listingId, other]) {
      expectSameHits(
        mem.lexicalSearch(listingId, phrases, [], 20),
        fts.lexicalSearch(listingId, phrases, [], 20),
        `${listingId}: e-mail foxes`,
      );
    }
    expect(search).not.toHaveBeenCalled();
  });
});

describe('full-text search on the lexical thread', () => {
  it('reads the postings into shared memory, and answers every query there as FTS5 does', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    const { data } = mem.lexical.postings(() => 0)!;
    const { ids, lengths, listingOf, termBytes, termOffsets, starts, positions, counts } = data;
    for (const array of [ids, lengths, listingOf, termBytes, termOffsets, starts, positions, counts])
      expect(array.buffer).toBeInstanceOf(SharedArrayBuffer);
    const until = Date.now() + 30_000;
    while (!lexicalThread()!.ready) {
      if (Date.now() > until) throw new Error('the lexical thread did not start within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const thread = vi.spyOn(LexicalThread.prototype, 'start');
    expectSameAnswersEverywhere([[], ...FILTERS]);
    expect(thread).toHaveBeenCalled();
    // A started search, filtered or not, runs on the other thread: none here.
    const here = vi.spyOn(LexicalPostings.prototype, 'searchWeighted');
    for (const filters of [[], FILTERS[0]!]) {
      const hits = mem.startLexicalSearch(other, lexicalPhrases('running foxes'), filters, 20)();
      expect(hits.length).toBeGreaterThan(0);
    }
    expect(here).not.toHaveBeenCalled();
  });
});

describe('the postings after the knowledge base changes', () => {
  const unique = lexicalPhrases('zyzzogeton');

  it('answers from FTS5 at once after a document is added, then from postings read again', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    await ingest(kb.listingId, 'late.json', [
      { text: 'A zyzzogeton beetle and running foxes in the café.', group: 2, parity: 'odd', score: 9 },
      ...generated(20, 2000),
    ]);
    const search = vi.spyOn(LexicalPostings.prototype, 'search');
    // The stale postings are set aside: the new word is found at once.
    const found = mem.lexicalSearch(kb.listingId, unique, [], 10);
    expect(found).toHaveLength(1);
    expect(found).toEqual(fts.lexicalSearch(kb.listingId, unique, [], 10));
    expect(search).not.toHaveBeenCalled();
    expect(mem.lexicalStats(unique, kb.listingId)).toEqual(fts.lexicalStats(unique, kb.listingId));
    expectSameAnswersEverywhere();
    expect(search).not.toHaveBeenCalled();

    expect(await mem.lexicalBuilt()).toBe(true);
    // Followed from the earlier postings (21 new chunks of about 400), not read whole.
    expect(mem.lexical.lastRead).toBe('followed');
    expect(mem.lexical.postings(() => 0)).toBeDefined();
    expect(mem.lexicalSearch(kb.listingId, unique, [], 10)).toEqual(found);
    expect(search).toHaveBeenCalled();
    expectSameAnswersEverywhere(FILTERS.slice(0, 2));
  });

  it('answers from FTS5 at once after a document is deleted, then from postings read again', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    expect(mem.lexicalSearch(kb.listingId, unique, [], 10)).toHaveLength(1);
    const documents = new SqliteDocumentRepository(kb.services.db);
    const late = documents.list(kb.listingId).find((d) => d.source === 'late.json')!;
    documents.delete(late.id);
    const search = vi.spyOn(LexicalPostings.prototype, 'search');
    expect(mem.lexicalSearch(kb.listingId, unique, [], 10)).toEqual([]);
    expect(fts.lexicalSearch(kb.listingId, unique, [], 10)).toEqual([]);
    expect(mem.lexicalScores(unique, listingIds(kb.listingId))).toEqual([]);
    expectSameAnswersEverywhere();
    expect(search).not.toHaveBeenCalled();

    expect(await mem.lexicalBuilt()).toBe(true);
    expect(mem.lexical.lastRead).toBe('followed');
    expect(mem.lexical.postings(() => 0)).toBeDefined();
    expectSameAnswersEverywhere(FILTERS.slice(0, 2));
    expect(search).toHaveBeenCalled();
    expect(mem.lexicalSearch(kb.listingId, unique, [], 10)).toEqual([]);
  });

  it('follows a new document that takes the chunk ids of a deleted one', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    const documents = new SqliteDocumentRepository(kb.services.db);
    await ingest(other, 'last.json', [{ text: 'A quetzal sang near the café.' }, ...generated(5, 3000)]);
    expect(await mem.lexicalBuilt()).toBe(true);
    const maxId = () => kb.services.db.prepare(`SELECT max(id) FROM chunks`).pluck().get() as number;
    const before = maxId();
    // The last document's chunks hold the highest ids: a chunk id is max(id) + 1, so the next
    // document written takes them again.
    documents.delete(documents.list(other).find((d) => d.source === 'last.json')!.id);
    await ingest(other, 'again.json', [{ text: 'A zebra brayed by the river.' }, ...generated(5, 4000)]);
    expect(maxId()).toBe(before);
    expect(await mem.lexicalBuilt()).toBe(true);
    expect(mem.lexical.notFollowed).toBeUndefined();
    expect(mem.lexical.lastRead).toBe('followed');
    const quetzal = lexicalPhrases('quetzal');
    expect(mem.lexicalSearch(other, quetzal, [], 10)).toEqual([]);
    expect(mem.lexicalSearch(other, lexicalPhrases('zebra brayed'), [], 10)).toHaveLength(1);
    expectSameAnswersEverywhere(FILTERS.slice(0, 2));
  });

  it('does not follow a change past the memory bound: FTS5 answers', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    const tokens = mem.lexical.postings(() => 0)!.data.indexTokens;
    const bounded = new SqliteSearchRepository(kb.services.db, {
      lexical: { minRows: 0, maxInstances: tokens + 5 },
    });
    try {
      expect(await bounded.lexicalBuilt()).toBe(true);
      await ingest(other, 'over.json', [
        { text: 'Ten more words push this index past its bound of tokens.' },
      ]);
      expect(await bounded.lexicalBuilt()).toBe(false);
      expect(bounded.lexical.postings(() => 0)).toBeUndefined();
      const phrases = lexicalPhrases('bound tokens');
      expect(bounded.lexicalSearch(other, phrases, [], 10)).toEqual(
        fts.lexicalSearch(other, phrases, [], 10),
      );
    } finally {
      bounded.close();
    }
  });

  it('reads everything again after a change to more than a quarter of the chunks', async () => {
    expect(await mem.lexicalBuilt()).toBe(true);
    await ingest(other, 'large.json', generated(200, 5000));
    expect(await mem.lexicalBuilt()).toBe(true);
    expect(mem.lexical.lastRead).toBe('whole');
    expectSameAnswersEverywhere();
  });
});

describe('the postings cache', () => {
  it('leaves any other FTS5 syntax to FTS5', () => {
    expect(mem.lexical.terms(['"fox"', '"run"'])).toEqual(['fox', 'run']);
    expect(mem.lexical.terms(['"fox"', 'run*'])).toBeUndefined();
    expect(mem.lexical.terms(['"fox" "run"'])).toBeUndefined();
  });

  it('holds nothing read after it is closed', async () => {
    const closing = new SqliteSearchRepository(kb.services.db, { lexical: { minRows: 0 } });
    const read = closing.lexicalBuilt();
    closing.close();
    expect(await read).toBe(false);
    expect(closing.lexical.postings(() => 0)).toBeUndefined();
  });

  it('answers through FTS5 when its own connection cannot load the native module', async () => {
    // Electron's build of better-sqlite3 is passed as nativeBinding; one that does not load must not
    // break search.
    const broken = new SqliteSearchRepository(kb.services.db, {
      lexical: { minRows: 0, nativeBinding: join(dirname(kb.services.dataDir), 'missing.node') },
    });
    try {
      const phrases = lexicalPhrases('running foxes');
      expect(broken.lexicalSearch(kb.listingId, phrases, [], 20)).toEqual(
        fts.lexicalSearch(kb.listingId, phrases, [], 20),
      );
      expect(await broken.lexicalBuilt()).toBe(false);
      expect(broken.lexical.lastError).toMatch(/query tokenizer could not start/);
    } finally {
      broken.close();
    }
  });
});

describe('an in-memory database', () => {
  it('never builds postings', async () => {
    const db = openDatabase(':memory:');
    try {
      const repo = new SqliteSearchRepository(db, { lexical: { minRows: 0 } });
      expect(await repo.lexicalBuilt()).toBe(false);
      expect(repo.lexical.postings(() => 0)).toBeUndefined();
      expect(repo.lexicalSearch('lst_none', lexicalPhrases('anything'), [], 10)).toEqual([]);
      repo.close();
    } finally {
      db.close();
    }
  });
});

/**
 * A knowledge base of its own (the shared one is left as the other tests expect it), with a repository
 * answering from FTS5 alone and one from the postings; everything is closed after `use`.
 */
async function withOwnKnowledgeBase(
  use: (
    own: TestKnowledgeBase,
    ftsOnly: SqliteSearchRepository,
    repo: SqliteSearchRepository,
  ) => Promise<void>,
): Promise<void> {
  const own = await buildKnowledgeBase();
  const ftsOnly = new SqliteSearchRepository(own.services.db, { lexical: { minRows: Infinity } });
  const repo = new SqliteSearchRepository(own.services.db, { lexical: { minRows: 0 } });
  try {
    await use(own, ftsOnly, repo);
  } finally {
    repo.close();
    ftsOnly.close();
    own.close();
  }
}

describe('a full-text index that does not agree with the chunks', () => {
  it('is not read into memory: FTS5 answers, and the reason is kept', () =>
    withOwnKnowledgeBase(async (broken, ftsOnly, repo) => {
      // A full-text row with no chunk (as a half-restored backup could leave): the join drops it in SQL.
      broken.services.db
        .prepare(`INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)`)
        .run(9_999_999, 'orphan brown dog');
      const search = vi.spyOn(LexicalPostings.prototype, 'search');
      expect(await repo.lexicalBuilt()).toBe(false);
      expect(repo.lexical.lastError).toMatch(/full-text row 9999999 has no chunk/);
      expect(repo.lexical.postings(() => 0)).toBeUndefined();
      const phrases = lexicalPhrases('brown dog orphan');
      expect(repo.lexicalSearch(broken.listingId, phrases, [], 10)).toEqual(
        ftsOnly.lexicalSearch(broken.listingId, phrases, [], 10),
      );
      expect(repo.lexicalStats(phrases, broken.listingId)).toEqual(
        ftsOnly.lexicalStats(phrases, broken.listingId),
      );
      expect(search).not.toHaveBeenCalled();
    }));
});

describe('documents whose chunk ids interleave', () => {
  it('are followed by their own ids, as a commit streaming two documents at once writes them', () =>
    withOwnKnowledgeBase(async (streamed, ftsOnly, repo) => {
      const db = streamed.services.db;
      // Enough chunks that six new ones are a change to follow (a quarter or less of the chunks).
      const path = join(dirname(streamed.services.dataDir), 'base.json');
      writeFileSync(path, JSON.stringify(generated(60, 0)));
      await streamed.services.ingestion.run({
        listingId: streamed.listingId,
        inputs: [{ path }],
        atomic: true,
        limits: STUDIO_LIMITS,
      });
      expect(await repo.lexicalBuilt()).toBe(true);
      // Two documents written in turns, chunk by chunk, and their full-text rows (as the commit does).
      const now = new Date().toISOString();
      const start = (db.prepare(`SELECT max(id) FROM chunks`).pluck().get() as number) + 1;
      db.transaction(() => {
        for (const doc of ['doc_streamed_a', 'doc_streamed_b']) {
          db.prepare(
            `INSERT INTO documents (id, listing_id, source, format, content_hash, bytes, chunk_count, created_at, updated_at)
              VALUES (?, ?, ?, 'json', ?, 0, 3, ?, ?)`,
          ).run(doc, streamed.listingId, `${doc}.json`, doc, now, now);
        }
        for (let i = 0; i < 6; i++) {
          const doc = i % 2 === 0 ? 'doc_streamed_a' : 'doc_streamed_b';
          const text = `${doc === 'doc_streamed_a' ? 'Axolotl' : 'Blobfish'} swims past the fox, part ${i}.`;
          db.prepare(
            `INSERT INTO chunks (id, listing_id, document_id, chunk_index, text, token_count, content_hash)
              VALUES (?, ?, ?, ?, ?, 8, ?)`,
          ).run(start + i, streamed.listingId, doc, Math.floor(i / 2), text, `h${i}`);
          db.prepare(`INSERT INTO chunks_fts (rowid, text) VALUES (?, ?)`).run(start + i, text);
        }
      })();
      expect(await repo.lexicalBuilt()).toBe(true);
      expect(repo.lexical.notFollowed).toBeUndefined();
      expect(repo.lexical.lastRead).toBe('followed');
      for (const query of ['axolotl', 'blobfish fox', 'swims part', 'brown fox river']) {
        const phrases = lexicalPhrases(query);
        expectSameHits(
          repo.lexicalSearch(streamed.listingId, phrases, [], 20),
          ftsOnly.lexicalSearch(streamed.listingId, phrases, [], 20),
          query,
        );
      }
      expect(repo.lexicalSearch(streamed.listingId, lexicalPhrases('axolotl'), [], 20)).toHaveLength(3);
    }));
});
