import { readQueries } from '../src/core/retrieve/eval/beir';
import { CANDIDATES_PER_SEARCH } from '../src/core/retrieve/hybrid';
import { lexicalPhrases, weightedPhrases } from '../src/core/retrieve/scoring';
import { SqliteSearchRepository } from '../src/db/repositories/search';
import { DBPEDIA, newKnowledgeBase, synthesize, type KnowledgeBase } from './retrieve';
import { latencies, median, round, type Latencies } from './stats';
import type { Suite, Table } from './suite';

/** Chunks of the large listing at --scale 1; --scale 5 gives the spec's 500,000. */
const LARGE_CHUNKS = 100_000;
/** The listing that shares the index with the large one. */
const SMALL_CHUNKS = 2_000;

interface Measured extends Latencies {
  scenario: string;
  listingChunks: number;
  indexRows: number;
  /** Median of the rows (whole index) that hold any phrase a query searched: what FTS5 reads and scores. */
  matchedP50: number;
}

/**
 * The full-text half of hybrid retrieval (the default mode) on natural text at scale, in process: what
 * `rankChunks` asks of the index for a query before any dense work, `lexicalStats` then `lexicalSearch`
 * of the hybrid pool (100 candidates). The dense suites' synthetic texts have no words of middle frequency,
 * so they never show this cost.
 */
export const retrieveLexicalSuite: Suite = {
  name: 'retrieve.lexical',
  description:
    'Full-text (BM25) candidates of hybrid retrieval on natural text: a large listing alone, then beside a small one (the rowid window)',
  async run(context) {
    const queries = (await readQueries(DBPEDIA)).map((q) => q.text);
    const large = Math.max(500, Math.round(LARGE_CHUNKS * context.options.scale));
    const small = Math.max(100, Math.min(SMALL_CHUNKS, Math.round(large / 10)));
    const kb = newKnowledgeBase(context, 'kbs-bench-lexical-');
    try {
      context.log(`retrieve.lexical: building ${large} chunks of dbpedia sentences`);
      const buildMs = await synthesize(kb, large, context.rng('retrieve.lexical.large'));
      const index = new SqliteSearchRepository(kb.services.db);
      const results: Measured[] = [];
      results.push(
        measure(
          kb,
          index,
          kb.listingId,
          queries,
          'large listing, alone in the index',
          context.options.repeat,
        ),
      );

      context.log(`retrieve.lexical: adding a listing of ${small} chunks`);
      const wallet = kb.services.wallets.defaultWallet().address;
      const other: KnowledgeBase = {
        ...kb,
        listingId: kb.services.listings.create(
          { title: 'Small listing', accessModel: 'one_time', price: 0 },
          wallet,
        ).id,
      };
      await synthesize(other, small, context.rng('retrieve.lexical.small'));
      results.push(
        measure(
          kb,
          index,
          kb.listingId,
          queries,
          'large listing, beside the small one',
          context.options.repeat,
        ),
        measure(
          kb,
          index,
          other.listingId,
          queries,
          'small listing, its rowid window',
          context.options.repeat,
        ),
      );
      const unwindowed = measureUnwindowed(kb, other.listingId, queries, context.options.repeat);
      results.push(unwindowed.measured);
      const windowed = results[2]!;
      const table: Table = {
        title: `lexicalStats + lexicalSearch (${CANDIDATES_PER_SEARCH} candidates), ${queries.length} dbpedia queries, in process, ms`,
        columns: ['scenario', 'listing chunks', 'index rows', 'p50 ms', 'p95 ms', 'rows matched p50'],
        rows: results.map((r) => [r.scenario, r.listingChunks, r.indexRows, r.p50Ms, r.p95Ms, r.matchedP50]),
      };
      return {
        figures: { largeChunks: large, smallChunks: small, buildMs: Math.round(buildMs), results },
        tables: [table],
        notes: [
          "Chunks are 2–4 random sentences of the dbpedia-5k abstracts (natural word frequencies), written through the store as retrieve.latency's synthetic base is.",
          'FTS5 scores every posting of the phrases searched (it has no early termination), so the cost grows with the postings of a query\'s middle-frequency words: at 500,000 chunks (--scale 5) hybrid and lexical retrieval spend 0.1–0.5 s here, far from the dense path\'s 15 ms. See docs/performance.md, "Full-text search at scale".',
          `The small listing's window: p50 ${windowed.p50Ms} ms against ${unwindowed.measured.p50Ms} ms reading every posting (${round(unwindowed.measured.p50Ms / Math.max(windowed.p50Ms, 0.01), 1)}×).`,
        ],
        checks: [
          {
            name: 'the rowid window finds what the whole index finds (small listing)',
            ok: unwindowed.sameHits(index),
            detail: 'the same chunk ids and BM25 for every query',
          },
        ],
      };
    } finally {
      kb.services.close();
    }
  },
};

function searchOnce(index: SqliteSearchRepository, listingId: string, query: string) {
  const phrases = lexicalPhrases(query);
  const weighted = weightedPhrases(phrases, index.lexicalStats(phrases, listingId));
  const searched = weighted.map((w) => w.phrase);
  return { searched, hits: index.lexicalSearch(listingId, searched, [], CANDIDATES_PER_SEARCH) };
}

function measure(
  kb: KnowledgeBase,
  index: SqliteSearchRepository,
  listingId: string,
  queries: string[],
  scenario: string,
  repeat: number,
): Measured {
  const count = kb.services.db.prepare(`SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?`).pluck();
  const ms: number[] = [];
  const matched: number[] = [];
  for (const query of queries) searchOnce(index, listingId, query); // the page cache warmed
  for (let r = 0; r < repeat; r++) {
    for (const query of queries) {
      const started = performance.now();
      const { searched } = searchOnce(index, listingId, query);
      ms.push(performance.now() - started);
      if (r === 0) matched.push(searched.length ? (count.get(searched.join(' OR ')) as number) : 0);
    }
  }
  return { scenario, ...sizesOf(kb, listingId), ...latencies(ms), matchedP50: median(matched) };
}

function sizesOf(kb: KnowledgeBase, listingId: string): { listingChunks: number; indexRows: number } {
  const db = kb.services.db;
  return {
    listingChunks: db
      .prepare(`SELECT count(*) FROM chunks WHERE listing_id = ?`)
      .pluck()
      .get(listingId) as number,
    indexRows: db.prepare(`SELECT count(*) FROM chunks`).pluck().get() as number,
  };
}

/** The small listing searched as before the window: the join drops the other listing's postings late. */
function measureUnwindowed(kb: KnowledgeBase, listingId: string, queries: string[], repeat: number) {
  const db = kb.services.db;
  const index = new SqliteSearchRepository(db);
  const search = db.prepare(
    `SELECT c.id AS id, -bm25(chunks_fts) AS bm25
      FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
      WHERE chunks_fts MATCH ? AND c.listing_id = ?
      ORDER BY bm25 DESC, c.id LIMIT ?`,
  );
  const held = db
    .prepare(
      `SELECT EXISTS (SELECT 1 FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid
      WHERE chunks_fts MATCH ? AND c.listing_id = ?)`,
    )
    .pluck();
  // The phrases the windowed search weighs, each looked for in the listing as the old check did.
  const phrasesOf = queries.map((q) => searchOnce(index, listingId, q).searched);
  const run = (i: number) => {
    for (const p of phrasesOf[i]!) held.get(p, listingId);
    return phrasesOf[i]!.length
      ? search.all(phrasesOf[i]!.join(' OR '), listingId, CANDIDATES_PER_SEARCH)
      : [];
  };
  const ms: number[] = [];
  for (let r = 0; r < repeat; r++) {
    for (let i = 0; i < queries.length; i++) {
      const started = performance.now();
      run(i);
      ms.push(performance.now() - started);
    }
  }
  return {
    measured: {
      scenario: 'small listing, every posting read (before the window)',
      ...sizesOf(kb, listingId),
      ...latencies(ms),
      matchedP50: NaN,
    } satisfies Measured,
    sameHits: (windowed: SqliteSearchRepository) =>
      queries.every(
        (q, i) => JSON.stringify(searchOnce(windowed, listingId, q).hits) === JSON.stringify(run(i)),
      ),
  };
}
