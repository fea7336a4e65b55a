import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LexicalPostings } from '../../../src/core/retrieve/lexicalPostings';
import { LexicalThread } from '../../../src/core/retrieve/lexicalThread';
import { collectGarbage } from '../../../src/core/workers/collectGarbage';
import { seededRng } from '../../../bench/prng';
import { readMemoryStatus } from '../../../bench/rss';
import { postingsData, type Row } from './postingsData';

/**
 * The lexical thread answers a full-text search exactly as the same search on the calling thread does,
 * reading the postings from shared memory; where it cannot (not started, postings not shared or let
 * go, closed), the search runs on the calling thread, with the same answer.
 */
const TERMS = Array.from({ length: 40 }, (_, i) => `term${i}`);

/** 3,000 rows in two listings; term i is in about 1 row in (i + 2), so some terms are common. */
function generatedRows(): Row[] {
  const rng = seededRng(11);
  return Array.from({ length: 3_000 }, (_, i) => {
    const terms: Record<string, number> = {};
    TERMS.forEach((term, t) => {
      if (rng.next() < 1 / (t + 2)) terms[term] = 1 + Math.floor(rng.next() * 3);
    });
    // Rows 1000 apart share their terms: ties the order by chunk id must break.
    if (i >= 1_000 && i % 7 === 0) Object.assign(terms, { term0: 2, term5: 1 });
    return {
      id: 2 * i + 1,
      listing: i % 4 === 0 ? 'B' : 'A',
      length: 5 + Math.floor(rng.next() * 20),
      terms,
    };
  });
}

const QUERIES = [
  ['term0'],
  ['term1', 'term9'],
  ['term3', 'term17', 'term33'],
  ['term5', 'term0', 'term5'],
  ['nowhere'],
];
const LIMITS = [1, 20, 100, 1_000];

let thread: LexicalThread;
let postings: LexicalPostings;
let id: number;

/** Resolves once the thread waits for requests (it starts through tsx here: a few hundred ms). */
async function ready(t: LexicalThread): Promise<void> {
  const until = Date.now() + 30_000;
  while (!t.ready) {
    if (Date.now() > until) throw new Error('the lexical thread did not start within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  thread = new LexicalThread();
  postings = new LexicalPostings(postingsData(generatedRows(), true));
  id = thread.install(postings.data)!;
  expect(id).toBeDefined();
  await ready(thread);
});

afterAll(() => thread.close());
afterEach(() => vi.restoreAllMocks());

describe('LexicalThread', () => {
  it('answers every query, listing, limit and filter as the search on this thread does, without searching here', () => {
    const masks = [
      undefined,
      postings.mask(Array.from({ length: 3_000 }, (_, i) => 2 * i + 1).filter((n) => n % 3 === 0)),
      postings.mask([]),
    ];
    const want = QUERIES.flatMap((terms) =>
      ['A', 'B'].flatMap((listing) =>
        LIMITS.flatMap((limit) => masks.map((mask) => postings.search(terms, listing, limit, mask))),
      ),
    );
    expect(want.some((hits) => hits.length >= 100)).toBe(true);
    const here = vi.spyOn(LexicalPostings.prototype, 'searchWeighted');
    const got = QUERIES.flatMap((terms) =>
      ['A', 'B'].flatMap((listing) =>
        LIMITS.flatMap((limit) =>
          masks.map((mask) =>
            thread.start(id, postings, { terms, listingId: listing, limit, allowed: mask })(),
          ),
        ),
      ),
    );
    expect(here).not.toHaveBeenCalled();
    expect(got).toEqual(want);
    expect(
      thread.start(id, postings, { terms: ['term1'], listingId: 'no such listing', limit: 20 })(),
    ).toEqual([]);
  });

  it('waits out a search that was never joined before starting the next', () => {
    const unjoined = thread.start(id, postings, { terms: ['term1'], listingId: 'A', limit: 50 });
    const next = thread.start(id, postings, { terms: ['term2', 'term4'], listingId: 'B', limit: 30 });
    expect(next()).toEqual(postings.search(['term2', 'term4'], 'B', 30));
    expect(unjoined()).toEqual(postings.search(['term1'], 'A', 50));
  });

  it('searches here for postings it was never given or has let go of, and for a limit past its room', () => {
    const here = vi.spyOn(LexicalPostings.prototype, 'searchWeighted');
    const other = new LexicalPostings(postingsData(generatedRows(), true));
    const otherId = thread.install(other.data)!;
    thread.drop(otherId);
    expect(thread.start(otherId, other, { terms: ['term0'], listingId: 'A', limit: 20 })()).toEqual(
      postings.search(['term0'], 'A', 20),
    );
    expect(here).toHaveBeenCalledTimes(2);
    expect(thread.start(id, postings, { terms: ['term0'], listingId: 'A', limit: 5_000 })()).toEqual(
      postings.search(['term0'], 'A', 5_000),
    );
  });

  it.skipIf(process.platform !== 'linux')(
    'gives back the shared memory of postings it lets go of, though it allocates next to nothing',
    async () => {
      const residentMb = () => readMemoryStatus(process.pid)!.rss / 2 ** 20;
      const before = residentMb();
      // Postings with 128 MB of positions, every page written; made in a function of its own, so that
      // nothing here refers to them once they are installed.
      const install = () =>
        thread.install({
          ...postingsData(generatedRows(), true),
          positions: new Uint32Array(new SharedArrayBuffer(128 * 1024 * 1024)).fill(1),
        })!;
      const large = install();
      const peak = residentMb();
      expect(peak - before).toBeGreaterThan(120);
      thread.drop(large);
      // Messages are handled in order: once this search is answered, the thread has let them go.
      expect(thread.start(id, postings, { terms: ['term0'], listingId: 'A', limit: 5 })()).toEqual(
        postings.search(['term0'], 'A', 5),
      );
      // This thread's own references (the message sent), as the server's thread collects them (letGo).
      collectGarbage();
      // Held as garbage by a thread that never collected, they stayed resident.
      await expect.poll(residentMb).toBeLessThan(peak - 96);
    },
  );

  it('does not take postings outside shared memory', () => {
    expect(thread.install(postingsData(generatedRows(), false))).toBeUndefined();
  });

  it('searches here once closed', async () => {
    const closing = new LexicalThread();
    const closingId = closing.install(postings.data)!;
    await ready(closing);
    await closing.close();
    expect(closing.ready).toBe(false);
    const here = vi.spyOn(LexicalPostings.prototype, 'searchWeighted');
    expect(closing.start(closingId, postings, { terms: ['term3'], listingId: 'A', limit: 20 })()).toEqual(
      postings.search(['term3'], 'A', 20),
    );
    expect(here).toHaveBeenCalledTimes(2);
  });
});
