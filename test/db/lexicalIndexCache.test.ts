import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { lexicalPhrases } from '../../src/core/retrieve/scoring';
import { SqliteDocumentRepository } from '../../src/db/repositories/documents';
import { SqliteSearchRepository } from '../../src/db/repositories/search';
import { buildKnowledgeBase, type TestKnowledgeBase } from '../core/retrieve/knowledgeBase';

/**
 * Postings let go of are collected at once on this thread when they are large (letGo): their shared
 * memory is freed only once every thread holding them has collected, and an idle server might not for
 * hours. The memory itself is measured in docs/performance.md ("Memory after a large deletion") and by
 * test/core/retrieve/lexicalThread.test.ts for the lexical thread; here, when this thread collects.
 */
const collections = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/core/workers/collectGarbage', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/core/workers/collectGarbage')>();
  return {
    collectGarbage: () => {
      collections.count++;
      actual.collectGarbage();
    },
  };
});

let kb: TestKnowledgeBase;
const items = (n: number, from: number) =>
  Array.from({ length: n }, (_, i) => ({ text: `Item ${from + i} about rivers, foxes and the café.` }));

beforeAll(async () => {
  kb = await buildKnowledgeBase();
  await kb.addListing(items(40, 0), 'more.json');
});
afterAll(() => kb.close());

/** A search that finds the postings stale, sets them aside and starts the next read. */
const search = (repo: SqliteSearchRepository) =>
  repo.lexicalSearch(kb.listingId, lexicalPhrases('fox'), [], 10);

describe('the postings let go of', () => {
  it('are collected on this thread once the read that followed from them is over, when large enough', async () => {
    const small = new SqliteSearchRepository(kb.services.db, { lexical: { minRows: 0 } });
    const large = new SqliteSearchRepository(kb.services.db, {
      lexical: { minRows: 0, collectAfterBytes: 1 },
    });
    try {
      expect(await small.lexicalBuilt()).toBe(true);
      expect(await large.lexicalBuilt()).toBe(true);
      // Only a weak reference here: nothing else on this thread may keep them once they are let go of
      // (the read's listeners held them while its worker lived, so the collection missed them).
      const earlier = new WeakRef(large.lexical.postings(() => 0)!.data.positions);
      collections.count = 0;
      await kb.addListing(items(10, 100), 'late.json');
      search(small);
      search(large);
      expect(await small.lexicalBuilt()).toBe(true);
      expect(await large.lexicalBuilt()).toBe(true);
      expect(large.lexical.lastRead).toBe('followed');
      // One collection, a turn after the read: the postings of a few hundred chunks are below the default.
      await expect.poll(() => collections.count).toBe(1);
      expect(earlier.deref()).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(collections.count).toBe(1);
    } finally {
      small.close();
      large.close();
    }
  });

  it('are collected when the knowledge base falls below the size postings are read for', async () => {
    const rows = kb.services.db.prepare(`SELECT count(*) FROM chunks`).pluck().get() as number;
    // Read at exactly its bound; a deletion then leaves fewer rows than it reads postings for.
    const bounded = new SqliteSearchRepository(kb.services.db, {
      lexical: { minRows: rows, collectAfterBytes: 1 },
    });
    try {
      expect(await bounded.lexicalBuilt()).toBe(true);
      collections.count = 0;
      const documents = new SqliteDocumentRepository(kb.services.db);
      documents.delete(documents.list(kb.listingId)[0]!.id);
      search(bounded);
      expect(bounded.lexical.postings(() => 0)).toBeUndefined();
      await expect.poll(() => collections.count).toBe(1);
    } finally {
      bounded.close();
    }
  });
});
