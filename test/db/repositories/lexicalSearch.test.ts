import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STUDIO_LIMITS } from '../../../src/core/ingest/limits';
import { lexicalPhrases } from '../../../src/core/retrieve/scoring';
import { SqliteSearchRepository } from '../../../src/db/repositories/search';
import { buildKnowledgeBase, SAMPLE_ITEMS, type TestKnowledgeBase } from '../../core/retrieve/knowledgeBase';

/**
 * Full-text search of a listing that shares the index with others reads only the stretch of rowids its
 * chunks lie in (`rowidWindow`). The window must never change what is found or how it scores, even when
 * another listing's rows lie inside it.
 */
let kb: TestKnowledgeBase;
let repo: SqliteSearchRepository;
let other: string;
const QUERIES = ['brown dog', 'river bank fox', 'galaxy telescope budget', 'farm house porch', 'lazy'];

beforeAll(async () => {
  kb = await buildKnowledgeBase();
  // Another listing whose words overlap, then more of the first listing: its window holds the other's rows.
  other = await kb.addListing(
    Array.from({ length: 40 }, (_, i) => ({
      text: `A brown dog number ${i} runs to the farm by the river${i === 7 ? ' with a zebra and a walrus' : ''}.`,
    })),
    'other.json',
  );
  const path = join(dirname(kb.services.dataDir), 'more.json');
  writeFileSync(
    path,
    JSON.stringify([{ text: 'A lazy brown dog watched the telescope.' }, { text: 'River bank budget.' }]),
  );
  await kb.services.ingestion.run({
    listingId: kb.listingId,
    inputs: [{ path }],
    atomic: true,
    limits: STUDIO_LIMITS,
  });
  repo = new SqliteSearchRepository(kb.services.db);
});
afterAll(() => kb.close());

/** The full-text search without a window, as it was written before. */
function unwindowed(listingId: string, phrases: string[]) {
  return kb.services.db
    .prepare(
      `SELECT c.id AS id, -bm25(chunks_fts) AS bm25
        FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
        WHERE chunks_fts MATCH ? AND c.listing_id = ?
        ORDER BY bm25 DESC, c.id LIMIT 100`,
    )
    .all(phrases.join(' OR '), listingId);
}

describe('full-text search in a listing that shares the index', () => {
  it('lies interleaved with another listing (the case the window must survive)', () => {
    const ids = (listingId: string) =>
      kb.services.db
        .prepare(`SELECT id FROM chunks WHERE listing_id = ? ORDER BY id`)
        .pluck()
        .all(listingId) as number[];
    const mine = ids(kb.listingId);
    const theirs = ids(other);
    expect(mine.length).toBe(SAMPLE_ITEMS.length + 2);
    expect(theirs.some((id) => id > mine[0]! && id < mine.at(-1)!)).toBe(true);
  });

  it('finds the same chunks with the same BM25 as a search of the whole index', () => {
    for (const listingId of [kb.listingId, other]) {
      for (const query of QUERIES) {
        const phrases = lexicalPhrases(query);
        const found = repo.lexicalSearch(listingId, phrases, [], 100);
        expect(found, `${listingId}: ${query}`).toEqual(unwindowed(listingId, phrases));
      }
    }
    expect(repo.lexicalSearch(kb.listingId, lexicalPhrases('brown dog'), [], 100).length).toBeGreaterThan(1);
  });

  it('scores chunks of any listing by id as the whole index does', () => {
    const all = kb.services.db.prepare(`SELECT id FROM chunks ORDER BY id`).pluck().all() as number[];
    for (const query of QUERIES) {
      const phrases = lexicalPhrases(query);
      for (const ids of [all, all.slice(3, 9), [all.at(-1)!, all[0]!]]) {
        const expected = kb.services.db
          .prepare(
            `SELECT rowid AS id, -bm25(chunks_fts) AS bm25 FROM chunks_fts
              WHERE chunks_fts MATCH ? AND +rowid IN (SELECT value FROM json_each(?))`,
          )
          .all(phrases.join(' OR '), JSON.stringify(ids));
        const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
        expect(repo.lexicalScores(phrases, ids).sort(byId)).toEqual(expected.sort(byId as never));
      }
    }
  });

  it("says which words each listing holds, the other's rows in its window notwithstanding", () => {
    const phrases = lexicalPhrases('telescope zebra walrus galaxy');
    // `zebra` and `walrus` are only in the other listing; `telescope` and `galaxy` only in this one.
    expect(repo.lexicalStats(phrases, kb.listingId).inListing).toEqual([true, false, false, true]);
    expect(repo.lexicalStats(phrases, other).inListing).toEqual([false, true, true, false]);
  });
});
