import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqliteSearchRepository } from '../../../src/db/repositories/search';
import type { RetrievalResult, RetrieveRequest } from '../../../src/shared/retrieval';
import { buildKnowledgeBase, SAMPLE_ITEMS, type TestKnowledgeBase } from './knowledgeBase';

let kb: TestKnowledgeBase;
beforeAll(async () => {
  kb = await buildKnowledgeBase();
});
afterAll(() => kb.close());
afterEach(() => {
  vi.restoreAllMocks();
});

const retrieve = (request: Omit<RetrieveRequest, 'listingId'>, listingId = kb.listingId) =>
  kb.services.retrieval.retrieve({ listingId, ...request }, 'studio');
const topics = (result: RetrievalResult) => result.chunks.map((c) => c.sourceMetadata.topic);

describe('ranking', () => {
  it('ranks the chunk holding the exact phrase first, with its metadata', async () => {
    const result = await retrieve({ query: 'quick brown fox jumps over the lazy dog' });
    expect(result.chunks[0]).toMatchObject({
      text: SAMPLE_ITEMS[0]!.text,
      sourceMetadata: { topic: 'animals', source: 'items.json', format: 'json', 'author.name': 'Ada' },
    });
    // The other chunk about a brown dog shares words, so it comes next.
    expect(result.chunks[1]!.text).toBe(SAMPLE_ITEMS[5]!.text);
    expect(result.chunks[0]!.score).toBeGreaterThan(result.chunks[1]!.score);
  });

  it('finds a paraphrase that shares no word with the chunk through the embedding model', async () => {
    const lexical = await retrieve({ query: 'equity prices dropped', mode: 'lexical' });
    expect(lexical.chunks).toEqual([]);
    for (const mode of ['hybrid', 'dense'] as const) {
      const result = await retrieve({ query: 'equity prices dropped', mode });
      expect(result.chunks[0]!.text).toBe('Stock markets fell sharply as investors sold shares of banks.');
    }
    const doctor = await retrieve({ query: 'doctor gives pills when someone feels sick' });
    expect(topics(doctor)[0]).toBe('medicine');
  });

  it('finds lexical matches only in lexical mode, best BM25 first', async () => {
    const result = await retrieve({ query: 'dog on a porch', mode: 'lexical', topK: 20 });
    expect(result.chunks.map((c) => c.text)).toEqual([SAMPLE_ITEMS[5]!.text, SAMPLE_ITEMS[0]!.text]);
  });

  it('applies filters inside the search: chunks matching only the filter still come back', async () => {
    // Nothing about finance matches the words; unfiltered, the finance chunk is not in the top 2.
    const unfiltered = await retrieve({ query: 'quick brown fox', topK: 2 });
    expect(topics(unfiltered)).not.toContain('finance');
    const filtered = await retrieve({ query: 'quick brown fox', topK: 2, filters: { topic: 'finance' } });
    expect(topics(filtered)).toEqual(['finance']);
    const lexicalOnly = await retrieve({
      query: 'quick brown fox',
      mode: 'lexical',
      filters: { topic: 'finance' },
    });
    expect(lexicalOnly.chunks).toEqual([]);
  });

  it('returns topK chunks whenever that many pass the filter, however unrelated they are', async () => {
    const result = await retrieve({
      query: 'galaxy telescope',
      topK: 3,
      filters: { draft: false, year: { $lte: 2021 } },
    });
    expect(topics(result).sort()).toEqual(['animals', 'cooking', 'politics']);
  });

  it('returns chunks without a word the model knows (no vector) under a filter, at dense score 0', async () => {
    const listingId = await kb.addListing(
      [
        { text: 'Astronomers observed a distant galaxy through an orbiting telescope.', kind: 'words' },
        { text: 'zzqx vvbn', kind: 'codes' },
        { text: '2023', kind: 'codes' },
      ],
      'blanks.json',
    );
    for (const mode of ['dense', 'hybrid'] as const) {
      const filtered = await retrieve({ query: 'cups', mode, filters: { kind: 'codes' } }, listingId);
      expect(filtered.chunks.map((c) => [c.text, c.score])).toEqual([
        ['zzqx vvbn', 0],
        ['2023', 0],
      ]);
      const all = await retrieve({ query: 'telescope', mode, topK: 5 }, listingId);
      expect(all.chunks.map((c) => c.text)).toEqual([
        'Astronomers observed a distant galaxy through an orbiting telescope.',
        'zzqx vvbn',
        '2023',
      ]);
    }
    // minScore still drops them.
    expect(
      (
        await retrieve(
          { query: 'cups', mode: 'dense', minScore: 0.01, filters: { kind: 'codes' } },
          listingId,
        )
      ).chunks,
    ).toEqual([]);
  });

  it('only searches the listing queried', async () => {
    const other = await kb.addListing(
      [{ text: 'A red fox hunts quick brown rabbits at dawn.', topic: 'other' }],
      'other.json',
    );
    const mine = await retrieve({ query: 'quick brown fox', topK: 20 });
    expect(topics(mine)).not.toContain('other');
    const theirs = await retrieve({ query: 'quick brown fox', topK: 20 }, other);
    expect(topics(theirs)).toEqual(['other']);
  });

  it("weighs only the listing's own words: a word found only in another listing does not lower its scores", async () => {
    await kb.addListing(
      [{ text: 'A vulpine quasar observatory.' }, { text: 'Quasar light curves and vulpine nebulae.' }],
      'words-elsewhere.json',
    );
    const score = async (query: string) =>
      (await retrieve({ query, mode: 'lexical', topK: 1 })).chunks.map((c) => [c.text, c.score]);
    // `quasar` is in the index (the other listing), not in this one: the query weighs as `fox` alone.
    const fox = await score('fox');
    expect(fox[0]![1]).toBeGreaterThan(0.3);
    expect(await score('fox quasar')).toEqual(fox);
    expect(await score('quasar')).toEqual([]);
  });

  it('finds words in a knowledge base of one chunk, where every word is in half of the rows', async () => {
    const single = await buildKnowledgeBase([{ text: 'Hugh Downs hosted a television show.' }]);
    try {
      const result = await single.services.retrieval.retrieve(
        { listingId: single.listingId, query: 'Hugh Downs', mode: 'lexical' },
        'studio',
      );
      expect(result.chunks.map((c) => c.text)).toEqual(['Hugh Downs hosted a television show.']);
      expect(result.chunks[0]!.score).toBeGreaterThan(0.3);
    } finally {
      single.close();
    }
  });

  it('has no dense part for a query without a known word: topK chunks at 0, the first by id, as any other', async () => {
    // It used to return none in dense mode, though topK chunks passed the filter.
    const first = SAMPLE_ITEMS.slice(0, 3).map((item) => item.topic);
    for (const request of [
      { query: 'zzqxv wwkkj', mode: 'dense' as const },
      { query: '?!', mode: 'hybrid' as const },
    ]) {
      const result = await retrieve({ ...request, topK: 3 });
      expect(topics(result), request.query).toEqual(first);
      expect(result.chunks.map((c) => c.score)).toEqual([0, 0, 0]);
      expect(topics(await retrieve({ ...request, filters: { topic: 'space' } }))).toEqual(['space']);
      expect((await retrieve({ ...request, minScore: 0.01 })).chunks).toEqual([]);
    }
    expect((await retrieve({ query: '?!', mode: 'lexical' })).chunks).toEqual([]);
  });
});

describe('the hybrid weight of a listing', () => {
  it('moves hybrid scores between lexical (0) and dense (1), and back to the default when cleared', async () => {
    const query = 'brown dog sleeping on a farm';
    // Chunks found by only one part score 0 on the other; a weight of 0 or 1 leaves them at 0.
    const scores = async (mode?: 'lexical' | 'dense') =>
      (await retrieve({ query, mode, topK: 20 })).chunks
        .filter((c) => c.score > 0)
        .map((c) => [c.text, c.score]);
    const lexical = await scores('lexical');
    const dense = await scores('dense');
    const byDefault = await scores();
    try {
      kb.services.listings.update(kb.listingId, { retrievalDenseWeight: 0 });
      expect(await scores()).toEqual(lexical);
      kb.services.listings.update(kb.listingId, { retrievalDenseWeight: 1 });
      expect(await scores()).toEqual(dense);
    } finally {
      kb.services.listings.update(kb.listingId, { retrievalDenseWeight: null });
    }
    expect(await scores()).toEqual(byDefault);
    expect(() => kb.services.listings.update(kb.listingId, { retrievalDenseWeight: 1.5 })).toThrow(
      /^retrievalDenseWeight: /,
    );
  });
});

describe('score contract', () => {
  const queries = [
    'quick brown fox jumps over the lazy dog',
    'equity prices dropped',
    'rain floods farms',
    'telescope',
    'budget committee roads',
  ];

  it('gives scores in [0, 1], best first, ties broken the same way every time', async () => {
    for (const query of queries) {
      for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
        const { chunks } = await retrieve({ query, mode, topK: 20 });
        for (const c of chunks) {
          expect(c.score).toBeGreaterThanOrEqual(0);
          expect(c.score).toBeLessThanOrEqual(1);
        }
        const scores = chunks.map((c) => c.score);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        expect((await retrieve({ query, mode, topK: 20 })).chunks).toEqual(chunks);
      }
    }
  });

  it('breaks ties at the topK cut by chunk id in every mode: the same text twice comes back in ingestion order', async () => {
    // The same sentence in many items (a footer repeated in every file): equal scores in every mode.
    const twin = 'Warranty claims are handled by the service desk within ten days.';
    const items = [
      ...SAMPLE_ITEMS.slice(0, 3),
      ...Array.from({ length: 12 }, (_, i) => ({ text: twin, copy: i })),
    ];
    const listingId = await kb.addListing(items, 'twins.json');
    for (const mode of ['dense', 'hybrid', 'lexical'] as const) {
      const all = await retrieve({ query: 'warranty claims service desk', mode, topK: 20 }, listingId);
      const copies = all.chunks.filter((c) => c.text === twin).map((c) => c.sourceMetadata.copy);
      expect(copies, mode).toEqual([...Array(12).keys()]);
      for (const topK of [1, 2, 3, 5, 8]) {
        const cut = await retrieve({ query: 'warranty claims service desk', mode, topK }, listingId);
        expect(cut.chunks, `${mode} topK ${topK}`).toEqual(all.chunks.slice(0, topK));
      }
    }
  });

  it('scores a chunk the same for the same query whatever else is retrieved (topK, filters, minScore)', async () => {
    for (const query of queries) {
      const all = await retrieve({ query, topK: 20 });
      const scoreOf = new Map(all.chunks.map((c) => [c.text, c.score]));
      const top1 = await retrieve({ query, topK: 1 });
      expect(top1.chunks[0]!.score).toBe(all.chunks[0]!.score);
      for (const topic of ['animals', 'finance', 'weather']) {
        const filtered = await retrieve({ query, topK: 20, filters: { topic } });
        for (const c of filtered.chunks) expect(c.score).toBe(scoreOf.get(c.text));
      }
      const threshold = all.chunks[2]?.score ?? 0;
      const above = await retrieve({ query, topK: 20, minScore: threshold });
      expect(above.chunks).toEqual(all.chunks.filter((c) => c.score >= threshold));
    }
  });

  it('makes minScore mean the same across queries: a strong match clears 0.3, an unrelated chunk does not', async () => {
    const strong = await retrieve({ query: 'quick brown fox jumps over the lazy dog', minScore: 0.3 });
    expect(topics(strong)[0]).toBe('animals');
    const weak = await retrieve({ query: 'galaxy telescope', minScore: 0.3, filters: { topic: 'cooking' } });
    expect(weak.chunks).toEqual([]);
  });
});

describe('query log and access', () => {
  it('logs every query with its listing, caller, topK, result count and latency', async () => {
    const result = await kb.services.retrieval.retrieve(
      { listingId: kb.listingId, query: 'brown dog', topK: 3 },
      { wallet: kb.wallet, keyId: 'key_test' },
    );
    expect(result.queryId).toMatch(/^qry_[0-9A-Za-z]{16}$/);
    expect(result.latencyMs).toBeGreaterThan(0);
    const row = kb.services.db.prepare('SELECT * FROM query_log WHERE id = ?').get(result.queryId);
    expect(row).toMatchObject({
      listing_id: kb.listingId,
      api_key_id: 'key_test',
      wallet: kb.wallet,
      query: 'brown dog',
      top_k: 3,
      result_count: result.chunks.length,
      latency_ms: result.latencyMs,
    });
  });

  it("refuses other wallets (403 credential_not_found) and hides other wallets' drafts (404)", async () => {
    const stranger = { wallet: '11111111111111111111111111111111' };
    const request = { listingId: kb.listingId, query: 'brown dog' };
    await expect(kb.services.retrieval.retrieve(request, stranger)).rejects.toMatchObject({
      code: 'listing_not_found',
    });
    kb.services.listings.publish(kb.listingId);
    await expect(kb.services.retrieval.retrieve(request, stranger)).rejects.toMatchObject({
      code: 'credential_not_found',
      message: expect.stringContaining('no credential for this listing'),
    });
    await expect(
      kb.services.retrieval.retrieve({ listingId: 'lst_missing', query: 'x' }, 'studio'),
    ).rejects.toMatchObject({ code: 'listing_not_found' });
  });
});

describe('a server just started', () => {
  it('waits for what the search still loads (saved full-text postings, search codes) before it searches', async () => {
    let release = () => {};
    const ready = vi
      .spyOn(SqliteSearchRepository.prototype, 'searchReady')
      .mockImplementation(() => new Promise<void>((resolve) => (release = resolve)));
    const searched = vi.spyOn(SqliteSearchRepository.prototype, 'lexicalStats');
    const dense = vi.spyOn(SqliteSearchRepository.prototype, 'denseSearch');
    for (const mode of ['hybrid', 'lexical', 'dense'] as const) {
      let answered = false;
      const result = retrieve({ query: 'brown dog', mode }).then((r) => ((answered = true), r));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered, mode).toBe(false);
      expect(searched, mode).not.toHaveBeenCalled();
      expect(dense, mode).not.toHaveBeenCalled();
      release();
      expect((await result).chunks.length, mode).toBeGreaterThan(0);
      expect(ready).toHaveBeenLastCalledWith(kb.listingId, expect.any(String), {
        lexical: mode !== 'dense',
        dense: mode !== 'lexical',
      });
      searched.mockClear();
      dense.mockClear();
    }
    expect(ready).toHaveBeenCalledTimes(3);
  });
});
