import { describe, expect, it } from 'vitest';
import { LexicalPostings } from '../../../src/core/retrieve/lexicalPostings';
import { postingsData, type Row } from './postingsData';
import { seededRng } from '../../../bench/prng';

/**
 * BM25 as SQLite documents FTS5's bm25() (k1 = 1.2, b = 0.75), written out from the formula: per query
 * term idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · |D| / avgdl)), idf = ln((N − n + 0.5) / (n + 0.5))
 * floored to 1e-6, N and avgdl over every row of the index, n the rows holding the term.
 */
function expectedBm25(rows: Row[], terms: string[], row: Row): number {
  const k1 = 1.2;
  const b = 0.75;
  const n = rows.length;
  const avgdl = rows.reduce((sum, r) => sum + r.length, 0) / n;
  let score = 0;
  for (const term of terms) {
    const tf = row.terms[term] ?? 0;
    if (tf === 0) continue;
    const holding = rows.filter((r) => (r.terms[term] ?? 0) > 0).length;
    const idf = Math.max(Math.log((n - holding + 0.5) / (holding + 0.5)), 1e-6);
    score += (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * row.length) / avgdl));
  }
  return score;
}

/** Every matching row of the listing (among `allowed` ids), best first: BM25 descending, then id. */
function expectedSearch(rows: Row[], terms: string[], listing: string, allowed?: Set<number>) {
  return rows
    .filter((r) => r.listing === listing && (allowed === undefined || allowed.has(r.id)))
    .map((r) => ({ id: r.id, bm25: expectedBm25(rows, terms, r) }))
    .filter((h) => h.bm25 > 0)
    .sort((a, b) => b.bm25 - a.bm25 || a.id - b.id);
}

function expectHits(got: { id: number; bm25: number }[], want: { id: number; bm25: number }[]) {
  expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
  got.forEach((h, i) => expect(h.bm25).toBeCloseTo(want[i]!.bm25, 12));
}

/**
 * Two listings over seven rows. Rows 2 and 7 are identical (a tie); `common` is in five of the seven
 * rows (idf floored to 1e-6); `elder` and `fig` are only in listing B, `date` in one row of each.
 */
const ROWS: Row[] = [
  { id: 2, listing: 'A', length: 10, terms: { appl: 2, banana: 1, common: 1 } },
  { id: 4, listing: 'A', length: 6, terms: { appl: 1, cherri: 3, common: 1 } },
  { id: 5, listing: 'B', length: 5, terms: { appl: 1, elder: 1 } },
  { id: 7, listing: 'A', length: 10, terms: { appl: 2, banana: 1, common: 1 } },
  { id: 9, listing: 'A', length: 4, terms: { date: 1 } },
  { id: 11, listing: 'B', length: 12, terms: { banana: 1, common: 1, date: 2, fig: 2 } },
  { id: 15, listing: 'A', length: 8, terms: { banana: 2, common: 1 } },
];
const postings = () => new LexicalPostings(postingsData(ROWS));

describe('LexicalPostings.search', () => {
  it('scores each row as the BM25 formula does, over the whole index', () => {
    const index = postings();
    for (const terms of [
      ['appl'],
      ['banana'],
      ['appl', 'banana'],
      ['cherri', 'date', 'banana'],
      ['common'],
    ]) {
      for (const listing of ['A', 'B']) {
        const want = expectedSearch(ROWS, terms, listing);
        expect(want.length).toBeGreaterThan(0);
        expectHits(index.search(terms, listing, 100), want);
      }
    }
  });

  it('gives the exact value of a hand-computed case', () => {
    // appl is in 4 of 7 rows (idf floored), cherri in 1: row 4 (length 6, avgdl 55/7), cherri 3 times.
    const avgdl = 55 / 7;
    const idf = Math.log((7 - 1 + 0.5) / (1 + 0.5));
    const cherri = (idf * 3 * 2.2) / (3 + 1.2 * (0.25 + (0.75 * 6) / avgdl));
    const appl = (1e-6 * 1 * 2.2) / (1 + 1.2 * (0.25 + (0.75 * 6) / avgdl));
    const [hit] = postings().search(['cherri', 'appl'], 'A', 1);
    expect(hit!.id).toBe(4);
    expect(hit!.bm25).toBeCloseTo(cherri + appl, 12);
  });

  it('orders by score, then by chunk id on ties, and keeps the best `limit`', () => {
    const index = postings();
    const all = index.search(['appl', 'banana'], 'A', 100);
    // Rows 2 and 7 are identical: equal scores, the lower id first.
    const two = all.findIndex((h) => h.id === 2);
    expect(all[two + 1]!.id).toBe(7);
    expect(all[two + 1]!.bm25).toBe(all[two]!.bm25);
    for (let i = 1; i < all.length; i++) expect(all[i]!.bm25).toBeLessThanOrEqual(all[i - 1]!.bm25);
    for (let limit = 1; limit <= all.length + 1; limit++) {
      expect(index.search(['appl', 'banana'], 'A', limit)).toEqual(all.slice(0, limit));
    }
    // A limit that cuts between the tied rows keeps the lower id.
    const tie = index.search(['appl'], 'A', 1);
    expect(tie.map((h) => h.id)).toEqual([2]);
  });

  it("never returns another listing's rows, though they count in the idf", () => {
    const index = postings();
    const inA = index.search(['appl', 'banana', 'fig', 'elder'], 'A', 100);
    expect(inA.map((h) => h.id).sort((a, b) => a - b)).toEqual([2, 4, 7, 15]);
    expect(index.search(['fig', 'elder'], 'A', 100)).toEqual([]);
    expectHits(index.search(['appl', 'banana'], 'B', 100), expectedSearch(ROWS, ['appl', 'banana'], 'B'));
    // date is in row 9 of A and row 11 of B: its idf is that of 2 rows in 7, not 1 in 5.
    const [nine] = index.search(['date'], 'A', 100);
    const avgdl = 55 / 7;
    const idf = Math.log((7 - 2 + 0.5) / (2 + 0.5));
    expect(nine!.id).toBe(9);
    expect(nine!.bm25).toBeCloseTo((idf * 2.2) / (1 + 1.2 * (0.25 + (0.75 * 4) / avgdl)), 12);
    expect(index.search(['appl'], 'missing listing', 100)).toEqual([]);
  });

  it('searches only the rows the allowed mask marks', () => {
    const index = postings();
    const allowed = index.mask([2, 9, 11, 15, 40]);
    expect(Array.from(allowed)).toEqual([1, 0, 0, 0, 1, 1, 1]);
    expectHits(
      index.search(['appl', 'banana', 'date'], 'A', 100, allowed),
      expectedSearch(ROWS, ['appl', 'banana', 'date'], 'A', new Set([2, 9, 15])),
    );
    expect(index.search(['appl'], 'A', 100, index.mask([]))).toEqual([]);
    expect(index.search(['cherri'], 'A', 100, allowed)).toEqual([]);
  });

  it('counts a duplicated term twice, as FTS5 counts a duplicated phrase', () => {
    const index = postings();
    const once = index.search(['cherri', 'banana'], 'A', 100);
    const twice = index.search(['cherri', 'banana', 'banana'], 'A', 100);
    expectHits(twice, expectedSearch(ROWS, ['cherri', 'banana', 'banana'], 'A'));
    const bananaOnce = once.find((h) => h.id === 15)!.bm25;
    expect(twice.find((h) => h.id === 15)!.bm25).toBeCloseTo(2 * bananaOnce, 12);
    // Row 4 holds no banana: its score is unchanged.
    expect(twice.find((h) => h.id === 4)!.bm25).toBe(once.find((h) => h.id === 4)!.bm25);
  });

  it('ignores unknown terms, and returns nothing for no terms or a limit of 0', () => {
    const index = postings();
    expect(index.search(['nowher', 'appl', 'zzz'], 'A', 100)).toEqual(index.search(['appl'], 'A', 100));
    expect(index.search(['nowher'], 'A', 100)).toEqual([]);
    expect(index.search([], 'A', 100)).toEqual([]);
    expect(index.search(['appl'], 'A', 0)).toEqual([]);
  });

  it('leaves no score behind from one query to the next', () => {
    const index = postings();
    const first = index.search(['banana'], 'A', 100);
    index.search(['appl', 'cherri'], 'A', 1);
    index.search(['appl', 'common'], 'A', 100, index.mask([4, 7]));
    expect(index.search(['banana'], 'A', 100)).toEqual(first);
  });

  it('matches a brute-force ranking on a seeded random index, for any limit and mask', () => {
    const rng = seededRng(20240611);
    const vocabulary = Array.from({ length: 12 }, (_, i) => `t${String(i).padStart(2, '0')}`);
    const rows: Row[] = Array.from({ length: 300 }, (_, i) => {
      // Few lengths and counts, so many rows tie.
      const terms: Record<string, number> = {};
      for (const term of vocabulary) if (rng.chance(0.25)) terms[term] = rng.between(1, 3);
      return {
        id: 3 * i + rng.int(3),
        listing: rng.pick(['A', 'B', 'C']),
        length: rng.between(3, 6) * 4,
        terms,
      };
    });
    const index = new LexicalPostings(postingsData(rows));
    let ties = 0;
    for (let q = 0; q < 40; q++) {
      const terms = Array.from({ length: rng.between(1, 4) }, () => rng.pick([...vocabulary, 'unknown']));
      const listing = rng.pick(['A', 'B', 'C']);
      const allowedIds = q % 3 === 0 ? rows.filter(() => rng.chance(0.5)).map((r) => r.id) : undefined;
      const allowed = allowedIds && index.mask(allowedIds);
      const want = expectedSearch(rows, terms, listing, allowedIds && new Set(allowedIds));
      for (let i = 1; i < want.length; i++) if (want[i]!.bm25 === want[i - 1]!.bm25) ties++;
      for (const limit of [1, 5, 17, want.length, 1000]) {
        expectHits(index.search(terms, listing, limit, allowed), want.slice(0, limit));
      }
    }
    expect(ties).toBeGreaterThan(10);
  });
});

describe('LexicalPostings.scoresOf', () => {
  it('scores the given chunks of any listing, leaving out those holding no term and unknown ids', () => {
    const index = postings();
    const terms = ['cherri', 'elder', 'banana'];
    const got = index.scoresOf(terms, [11, 9, 4, 5, 3, 2, 100, 15]);
    const byId = new Map(ROWS.map((r) => [r.id, r]));
    // 9 holds none of the terms, 3 and 100 are not in the index; the order is the ids' order.
    expect(got.map((h) => h.id)).toEqual([11, 4, 5, 2, 15]);
    for (const h of got) expect(h.bm25).toBeCloseTo(expectedBm25(ROWS, terms, byId.get(h.id)!), 12);
  });

  it('gives the same scores as search, duplicated terms counted twice, unknown terms ignored', () => {
    const index = postings();
    const terms = ['appl', 'unknown', 'banana', 'appl'];
    const searched = index.search(terms, 'A', 100);
    const scored = index.scoresOf(
      terms,
      searched.map((h) => h.id),
    );
    expect(scored).toEqual(searched);
    expect(index.scoresOf([], [2, 4])).toEqual([]);
    expect(index.scoresOf(['unknown'], [2, 4])).toEqual([]);
    expect(index.scoresOf(['appl'], [])).toEqual([]);
  });
});

describe('LexicalPostings counts', () => {
  it('gives each term its rows over the whole index, and whether a listing holds it', () => {
    const index = postings();
    expect(index.docFreq('appl')).toBe(4);
    expect(index.docFreq('common')).toBe(5);
    expect(index.docFreq('fig')).toBe(1);
    expect(index.docFreq('unknown')).toBe(0);
    expect(index.inListing('fig', 'B')).toBe(true);
    expect(index.inListing('fig', 'A')).toBe(false);
    expect(index.inListing('cherri', 'A')).toBe(true);
    expect(index.inListing('cherri', 'B')).toBe(false);
    expect(index.inListing('banana', 'B')).toBe(true);
    expect(index.inListing('unknown', 'A')).toBe(false);
    expect(index.inListing('appl', 'missing listing')).toBe(false);
  });

  it('finds terms of any script in the order of their UTF-8 bytes, as FTS5 keeps them', () => {
    // U+FF5A (fullwidth z) sorts after U+20000 in UTF-16 but before it in UTF-8; 'é' after 'z' in both.
    const words = ['a', 'z', 'é', 'ｚ', '𠀀', '日本', 'zz', 'ａ'];
    const index = new LexicalPostings(
      postingsData(words.map((w, i) => ({ id: i + 1, listing: 'A', length: 1, terms: { [w]: 1 } }))),
    );
    for (const [i, w] of words.entries()) {
      expect(index.docFreq(w), w).toBe(1);
      expect(
        index.search([w], 'A', 10).map((h) => h.id),
        w,
      ).toEqual([i + 1]);
    }
    expect(index.docFreq('zzz')).toBe(0);
    expect(index.docFreq('')).toBe(0);
    expect(index.docFreq('𠀁')).toBe(0);
  });

  it('counts its rows and each listing’s', () => {
    const index = postings();
    expect(index.rows).toBe(7);
    expect(index.listingChunks('A')).toBe(5);
    expect(index.listingChunks('B')).toBe(2);
    expect(index.listingChunks('missing listing')).toBe(0);
  });
});
