import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GloveSentenceModel, OFFLINE_MODEL } from '../../src/core/embed/offlineGlove';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { SqliteSearchRepository } from '../../src/db/repositories/search';
import { openServices, type StudioServices } from '../../src/db/services';
import { expectDocumentsEmbeddedHere } from '../helpers/embedHere';
import { OPENAI_TEST_KEY, startFakeOpenAi } from '../helpers/fakeProviders';
import type { FakeServer } from '../helpers/fakeProviders/server';
import { tempDir } from '../helpers/studio';

let openai: FakeServer;
const dir = tempDir();
beforeAll(async () => {
  openai = await startFakeOpenAi();
});
afterAll(async () => {
  await openai.close();
  dir.remove();
});

function studioWith(environment: Record<string, string>): StudioServices {
  return openServices(join(dir.path, `data-${Math.random().toString(36).slice(2)}`), { environment });
}

async function ingestInto(services: StudioServices) {
  const listing = services.listings.create(
    { title: 'Hosted', accessModel: 'one_time', price: 1, embeddingModel: 'text-embedding-3-small' },
    services.wallets.defaultWallet().address,
  );
  const file = join(dir.path, 'doc.md');
  writeFileSync(file, '# Title\n\nSome text to embed with a hosted model.\n');
  return services.ingestion.run({
    listingId: listing.id,
    inputs: [{ path: file }],
    atomic: false,
    limits: STUDIO_LIMITS,
  });
}

describe('the embedder registry', () => {
  it('embeds with the hosted model through the settings, environment first', async () => {
    const services = studioWith({ OPENAI_API_KEY: OPENAI_TEST_KEY });
    try {
      services.settings.set('openai.baseUrl', `${openai.url}/v1`);
      const before = openai.requests.length;
      const result = await ingestInto(services);
      expect(result.documents[0]).toMatchObject({ status: 'ingested' });
      const sent = openai.requests.slice(before);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.headers.authorization).toBe(`Bearer ${OPENAI_TEST_KEY}`);
    } finally {
      services.close();
    }
  });

  it('ingests a folder too large to stage at once with a hosted model: every chunk embedded and cached', async () => {
    // Each answer takes a round trip's time, as the API's do: the files' requests overlap.
    const slow = await startFakeOpenAi({ delayMs: 40 });
    const services = studioWith({ OPENAI_API_KEY: OPENAI_TEST_KEY, OPENAI_BASE_URL: `${slow.url}/v1` });
    try {
      const folder = join(dir.path, 'hosted-folder');
      mkdirSync(folder);
      // 2,500 CSV rows (a chunk each), then notes: with the offline model the commit would begin before
      // the notes are read, and hold the write lock the cache's writes need (they used to fail the
      // ingestion with SQLITE_BUSY).
      const rows = Array.from({ length: 2_500 }, (_, i) => `petrel ${i},the petrel note ${i}`);
      writeFileSync(join(folder, 'a-rows.csv'), ['name,note', ...rows].join('\n'));
      for (let i = 0; i < 30; i++)
        writeFileSync(join(folder, `b-note-${i}.md`), `# Note ${i}\n\nShearwater ${i} glides low.\n`);
      const listing = services.listings.create(
        { title: 'Hosted', accessModel: 'one_time', price: 1, embeddingModel: 'text-embedding-3-small' },
        services.wallets.defaultWallet().address,
      );
      const result = await services.ingestion.run({
        listingId: listing.id,
        inputs: [{ path: folder }],
        atomic: true,
        limits: STUDIO_LIMITS,
      });
      expect(result).toMatchObject({ committed: true, documentCount: 31, chunkCount: 2_530 });
      const cached = services.db
        .prepare(`SELECT COUNT(*) FROM embedding_cache WHERE model = 'text-embedding-3-small'`)
        .pluck()
        .get();
      expect(cached).toBe(2_530);
      // The notes' requests were sent before the files before them were staged, within the budget.
      expect(slow.mostAtOnce).toBeGreaterThan(1);
      expect(slow.mostAtOnce).toBeLessThanOrEqual(8);
    } finally {
      services.close();
      await slow.close();
    }
  });

  it("embeds the offline model's documents on the calling thread with KBSTUDIO_EMBED_THREAD=0", async () => {
    const services = studioWith({ KBSTUDIO_EMBED_THREAD: '0' });
    try {
      await expectDocumentsEmbeddedHere(services.embedderFor(OFFLINE_MODEL.id), [
        'The cat sat on the mat.',
        'A stock market crash',
      ]);
    } finally {
      services.close();
    }
  });

  it('rejects the documents with embedding_provider_unavailable when no key is set, saying where to set it', async () => {
    const services = studioWith({});
    try {
      const result = await ingestInto(services);
      expect(result.documents[0]).toMatchObject({
        status: 'rejected',
        error: { code: 'embedding_provider_unavailable' },
      });
      expect(result.documents[0]!.error!.message).toMatch(/OPENAI_API_KEY/);
    } finally {
      services.close();
    }
  });

  it('warms the offline model at start where a knowledge base with chunks uses it, with one query', async () => {
    const services = studioWith({ KBSTUDIO_EMBED_THREAD: '0' });
    const here = vi.spyOn(GloveSentenceModel.prototype, 'embed');
    try {
      const wallet = services.wallets.defaultWallet().address;
      const listing = services.listings.create(
        { title: 'Offline', accessModel: 'one_time', price: 1 },
        wallet,
      );
      expect(listing.embeddingModel).toBe(OFFLINE_MODEL.id);
      // Empty: nothing to search yet, so nothing is loaded for it.
      await services.warmSearch();
      expect(here).not.toHaveBeenCalled();

      const file = join(dir.path, 'offline.md');
      writeFileSync(file, '# Tides\n\nThe tide table lists the high waters of the harbour.\n');
      const result = await services.ingestion.run({
        listingId: listing.id,
        inputs: [{ path: file }],
        atomic: false,
        limits: STUDIO_LIMITS,
      });
      expect(result.documents[0]).toMatchObject({ status: 'ingested' });
      here.mockClear();
      await services.warmSearch();
      expect(here.mock.calls).toEqual([['warm-up query']]);
    } finally {
      here.mockRestore();
      services.close();
    }
  });

  it('starts warming up and tidying after the caller has gone on: nothing runs in its turn', async () => {
    const services = studioWith({ KBSTUDIO_EMBED_THREAD: '0' });
    const warmUp = vi.spyOn(SqliteSearchRepository.prototype, 'warmUp');
    const prepare = vi.spyOn(services.db, 'prepare');
    try {
      // A server prints its ready line right after these calls: no statement may run before it.
      const warmed = services.warmSearch();
      const pruned = services.pruneSources();
      expect(warmUp).not.toHaveBeenCalled();
      expect(prepare).not.toHaveBeenCalled();
      await Promise.all([warmed, pruned]);
      expect(warmUp).toHaveBeenCalledTimes(1);
      expect(prepare).toHaveBeenCalled();
    } finally {
      warmUp.mockRestore();
      prepare.mockRestore();
      services.close();
    }
  });

  it('answers a query on a listing without chunks with none, embedding nothing, and logs it', async () => {
    // No key for the hosted model: were its query embedded, the provider would be called and fail.
    const services = studioWith({ KBSTUDIO_EMBED_THREAD: '0' });
    const here = vi.spyOn(GloveSentenceModel.prototype, 'embed');
    try {
      const wallet = services.wallets.defaultWallet().address;
      for (const embeddingModel of [OFFLINE_MODEL.id, 'text-embedding-3-small']) {
        const listing = services.listings.create(
          { title: 'Empty', accessModel: 'one_time', price: 1, embeddingModel },
          wallet,
        );
        for (const mode of ['hybrid', 'dense', 'lexical'] as const) {
          const result = await services.retrieval.retrieve(
            { listingId: listing.id, query: 'tide tables of the harbour', mode },
            'studio',
          );
          expect(result.chunks).toEqual([]);
        }
        const logged = services.db
          .prepare(`SELECT COUNT(*) FROM query_log WHERE listing_id = ? AND result_count = 0`)
          .pluck()
          .get(listing.id);
        expect(logged).toBe(3);
      }
      expect(here).not.toHaveBeenCalled();
    } finally {
      here.mockRestore();
      services.close();
    }
  });
});
