import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { LexicalPostings } from '../../src/core/retrieve/lexicalPostings';
import { lexicalPhrases } from '../../src/core/retrieve/scoring';
import { SqliteSearchRepository } from '../../src/db/repositories/search';
import { buildKnowledgeBase, type TestKnowledgeBase } from '../core/retrieve/knowledgeBase';

/**
 * The full-text postings saved for the next process (lexicalPostingsFile.mjs): a new cache over the same
 * database takes them as they are when nothing changed, follows a change from them otherwise, and never
 * answers from a file that is damaged, cut short, of another tokenizer or of another database.
 */
let kb: TestKnowledgeBase;
let fts: SqliteSearchRepository;
let file: string;
const opened: SqliteSearchRepository[] = [];

const SENTENCES = [
  'The running foxes crossed the frozen river at dawn.',
  'A small café near the station serves strong coffee.',
  'Budget meetings ran long; the committee runs again tomorrow.',
  'Order 42 shipped in 2019 with 7 boxes of apples.',
  'The naïve résumé mentioned Zürich and São Paulo.',
];
const QUERIES = ['running foxes', 'café coffee', 'budget committee', '42 apples', 'zurich', 'river dawn the'];

const items = (count: number, offset: number) =>
  Array.from({ length: count }, (_, i) => ({
    text: `${SENTENCES[i % SENTENCES.length]} Item ${i + offset}.`,
    group: i % 3,
  }));

async function ingest(listingId: string, name: string, list: object[], into = kb): Promise<void> {
  const path = join(dirname(into.services.dataDir), name);
  writeFileSync(path, JSON.stringify(list));
  await into.services.ingestion.run({ listingId, inputs: [{ path }], atomic: true, limits: STUDIO_LIMITS });
}

/** A search repository as a new process would open one over the data directory (postings from `savedFile`). */
function repository(
  options: { savedFile?: string; spareBytes?: number; savedLoadWaitMs?: number } = {},
  over = kb,
) {
  const repo = new SqliteSearchRepository(over.services.db, {
    lexical: { minRows: 0, savedFile: file, ...options },
  });
  opened.push(repo);
  return repo;
}

/** Every query answered from the postings, as FTS5 answers it. */
function expectFtsAnswers(repo: SqliteSearchRepository, listingId = kb.listingId, ftsRepo = fts) {
  const search = vi.spyOn(LexicalPostings.prototype, 'search');
  for (const query of [...QUERIES, 'zyzzogeton']) {
    const phrases = lexicalPhrases(query);
    for (const limit of [1, 5, 50]) {
      expect(repo.lexicalSearch(listingId, phrases, [], limit), query).toEqual(
        ftsRepo.lexicalSearch(listingId, phrases, [], limit),
      );
    }
    // FTS5's counts stop at half the rows (no weight past that); the postings' are exact.
    const got = repo.lexicalStats(phrases, listingId);
    const want = ftsRepo.lexicalStats(phrases, listingId);
    expect(got.rows).toBe(want.rows);
    want.docFreq.forEach((n, i) => {
      if (n < Math.ceil(want.rows / 2)) expect(got.docFreq[i], query).toBe(n);
      else expect(got.docFreq[i], query).toBeGreaterThanOrEqual(n);
    });
  }
  expect(search).toHaveBeenCalled();
  search.mockRestore();
}

const mtime = () => statSync(file).mtimeMs;
/** What a lexical search waits for before it searches (searchReady). */
const fullText = (repo: SqliteSearchRepository) =>
  repo.searchReady(kb.listingId, 'offline', { lexical: true, dense: false });

beforeAll(async () => {
  kb = await buildKnowledgeBase(items(200, 0));
  fts = new SqliteSearchRepository(kb.services.db, { lexical: { minRows: Infinity } });
  file = join(dirname(kb.services.dataDir), 'saved', 'full-text.postings');
});
afterEach(() => {
  for (const repo of opened.splice(0)) repo.close();
  vi.restoreAllMocks();
});
afterAll(() => {
  fts.close();
  kb.close();
});

describe('saved full-text postings', () => {
  it('are saved by a read of the whole index, and taken as they are by the next process', async () => {
    const first = repository();
    expect(await first.lexicalBuilt()).toBe(true);
    expect(first.lexical.lastRead).toBe('whole');
    expect(existsSync(file)).toBe(true);
    expect(first.lexical.notSaved).toBeUndefined();
    first.close();

    const next = repository();
    expect(await next.lexicalBuilt()).toBe(true);
    expect(next.lexical.lastRead).toBe('file');
    expectFtsAnswers(next);
  });

  it('are followed from after a change made while no process held them, then saved again', async () => {
    expect(await repository().lexicalBuilt()).toBe(true);
    const before = readFileSync(file);
    await ingest(kb.listingId, 'late.json', [
      { text: 'A zyzzogeton beetle near the café.' },
      ...items(10, 500),
    ]);

    const next = repository();
    expect(await next.lexicalBuilt()).toBe(true);
    expect(next.lexical.lastRead).toBe('followed');
    expect(next.lexical.followedFromFile).toBe(true);
    expect(next.lexicalSearch(kb.listingId, lexicalPhrases('zyzzogeton'), [], 5)).toHaveLength(1);
    expectFtsAnswers(next);
    // The followed postings replaced the file: the process after takes them as they are.
    expect(readFileSync(file).equals(before)).toBe(false);
    const after = repository();
    expect(await after.lexicalBuilt()).toBe(true);
    expect(after.lexical.lastRead).toBe('file');
    expectFtsAnswers(after);
  });

  it('are not saved again for each change a process follows (at most every few minutes)', async () => {
    const repo = repository();
    expect(await repo.lexicalBuilt()).toBe(true);
    const saved = mtime();
    await ingest(kb.listingId, 'later.json', items(5, 900));
    expect(await repo.lexicalBuilt()).toBe(true);
    expect(repo.lexical.lastRead).toBe('followed');
    expect(repo.lexical.followedFromFile).toBe(false);
    expect(mtime()).toBe(saved);
    expectFtsAnswers(repo);
  });

  it('are not used when damaged, cut short, not postings or of another tokenizer: the index is read whole', async () => {
    expect(await repository().lexicalBuilt()).toBe(true);
    const good = readFileSync(file);
    const headerEnd = 44 + good.readUInt32LE(8);
    const damaged = Buffer.from(good);
    damaged[good.length - 5] = damaged[good.length - 5]! ^ 0xff;
    const otherTokenizer = Buffer.from(
      good
        .toString('latin1')
        .replace("porter unicode61'", "porter unicode62'")
        .replace('porter unicode61"', 'porter unicode62"'),
      'latin1',
    );
    expect(otherTokenizer.equals(good)).toBe(false);
    // Another listing's id in the header: every row would be that listing's.
    const otherListing = Buffer.from(
      good
        .toString('latin1')
        .replace(
          `"${kb.listingId}"`,
          `"${kb.listingId.slice(0, -1)}${kb.listingId.endsWith('x') ? 'y' : 'x'}"`,
        ),
      'latin1',
    );
    expect(otherListing.equals(good)).toBe(false);
    // A file of format version 1 (a SHA-256 where the CRC-32 is now).
    const versionOne = Buffer.from(
      good.toString('latin1').replace('{"version":2,', '{"version":1,'),
      'latin1',
    );
    expect(versionOne.equals(good)).toBe(false);
    const cases: [string, () => void, RegExp][] = [
      ['an older format', () => writeFileSync(file, versionOne), /^format version 1, not 2$/],
      ['damaged', () => writeFileSync(file, damaged), /checksum/],
      ['header altered', () => writeFileSync(file, otherListing), /checksum/],
      ['cut short', () => truncateSync(file, good.length - 8), /bytes where its header describes/],
      ['header cut short', () => truncateSync(file, headerEnd - 3), /header is cut short/],
      ['not postings', () => writeFileSync(file, 'SQLite format 3\0 and more bytes'), /not a postings file/],
      ['another tokenizer', () => writeFileSync(file, otherTokenizer), /tokenizer 'porter unicode62'/],
    ];
    for (const [label, spoil, reason] of cases) {
      writeFileSync(file, good);
      spoil();
      const repo = repository();
      expect(await repo.lexicalBuilt(), label).toBe(true);
      expect(repo.lexical.lastRead, label).toBe('whole');
      expect(repo.lexical.followedFromFile, label).toBe(false);
      expectFtsAnswers(repo);
      // The read replaced the spoiled file with a good one.
      expect(readFileSync(file).equals(good), label).toBe(true);
      expect(repo.lexical.fileNotUsed, label).toMatch(reason);
      expect(repo.lexical.notSaved, label).toBeUndefined();
      repo.close();
    }
  });

  it('of another database with the same generations are not taken as they are', async () => {
    // Two knowledge bases built alike: the same generations, other documents and chunk ids.
    const [one, two] = [await buildKnowledgeBase(items(200, 0)), await buildKnowledgeBase(items(200, 0))];
    const twoFts = new SqliteSearchRepository(two.services.db, { lexical: { minRows: Infinity } });
    const key = (of: TestKnowledgeBase) =>
      of.services.db
        .prepare(`SELECT count(*) || ':' || total(generation) FROM knowledge_base_generations`)
        .get();
    try {
      expect(key(one)).toEqual(key(two));
      expect(await repository({}, one).lexicalBuilt()).toBe(true);
      expect(existsSync(file)).toBe(true);
      const theirs = repository({}, two);
      expect(await theirs.lexicalBuilt()).toBe(true);
      expect(theirs.lexical.lastRead).toBe('whole');
      expect(theirs.lexical.followedFromFile).toBe(false);
      expect(theirs.lexical.notFollowed).toMatch(/chunks changed/);
      expectFtsAnswers(theirs, two.listingId, twoFts);
    } finally {
      twoFts.close();
      for (const repo of opened.splice(0)) repo.close();
      one.close();
      two.close();
    }
  });

  it('leave nothing behind when the disk is too full to save them; the postings still answer', async () => {
    const elsewhere = join(dirname(file), 'full', 'full-text.postings');
    const repo = repository({ savedFile: elsewhere, spareBytes: Number.MAX_SAFE_INTEGER });
    expect(await repo.lexicalBuilt()).toBe(true);
    expect(repo.lexical.lastRead).toBe('whole');
    expect(repo.lexical.notSaved).toMatch(/not saved: \d+ MB would leave under/);
    // Neither the file nor a partial one.
    expect(readdirSync(dirname(elsewhere))).toEqual([]);
    expectFtsAnswers(repo);
  });

  it('are waited for by the first queries while they are taken from the file, not while the index is read', async () => {
    expect(await repository().lexicalBuilt()).toBe(true);
    const started = repository();
    expect(fullText(started)).toBeUndefined();
    void started.lexical.build();
    const ready = fullText(started);
    expect(ready).toBeDefined();
    expect(started.lexical.postings(() => 0)).toBeUndefined();
    await ready;
    expect(started.lexical.postings(() => 0)).toBeDefined();
    expect(started.lexical.lastRead).toBe('file');
    expect(fullText(started)).toBeUndefined();

    // No saved file: a read of the whole index is not waited for; nor one past the wait allowed.
    const without = repository({ savedFile: join(dirname(file), 'none', 'full-text.postings') });
    void without.lexical.build();
    expect(fullText(without)).toBeUndefined();
    const impatient = repository({ savedLoadWaitMs: 0 });
    const built = impatient.lexical.build();
    expect(fullText(impatient)).toBeUndefined();
    await Promise.all([built, without.lexicalBuilt()]);
  });

  it("delete the partial files of writers whose process stopped, not a running process's", () => {
    const dead = `${file}.999999999-3.tmp`;
    const running = `${file}.${process.pid}-7.tmp`;
    writeFileSync(dead, 'partial');
    writeFileSync(running, 'partial');
    repository();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(running)).toBe(true);
  });
});
