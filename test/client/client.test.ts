import { readFileSync, writeFileSync } from 'node:fs';
import { openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KnowledgeClient, type Chunk } from '../../src/client';
import { STUDIO_LIMITS } from '../../src/core/ingest/limits';
import { generateKeypair, signMessage } from '../../src/core/wallets/keypair';
import { FIXTURES, startStudio, tempDir, type TestStudio } from '../helpers/studio';

/** One document per topic; each query below names words of exactly one of them. */
const ITEMS = [
  { text: 'The quick brown fox jumps over the lazy dog near the river bank.', topic: 'animals', year: 2019 },
  {
    text: 'A physician prescribed medication to treat the illness after examining her.',
    topic: 'medicine',
    year: 2021,
  },
  {
    text: 'Astronomers observed a distant galaxy through an orbiting telescope.',
    topic: 'space',
    year: 2022,
  },
  { text: 'Slow cooking of tomatoes and garlic makes a rich pasta sauce.', topic: 'cooking', year: 2020 },
  { text: 'Stock markets fell sharply as investors sold shares of banks.', topic: 'finance', year: 2023 },
];

let studio: TestStudio;
let client: KnowledgeClient;
let listingId: string;
const scratch = tempDir('kbs-client-');
const buyer = generateKeypair();

beforeAll(async () => {
  studio = await startStudio();
  const creator = studio.services.wallets.defaultWallet().address;
  client = new KnowledgeClient({
    baseUrl: `${studio.url}/v1`,
    apiKey: studio.services.apiKeys.create(creator).key,
  });
  listingId = studio.services.listings.create(
    {
      title: 'Field notes',
      description: 'Short notes on five topics',
      domain: 'general',
      accessModel: 'one_time',
      price: 1,
    },
    creator,
  ).id;
  const file = join(scratch.path, 'notes.json');
  writeFileSync(file, JSON.stringify(ITEMS));
  await studio.services.ingestion.run({
    listingId,
    inputs: [{ path: file }],
    atomic: true,
    limits: STUDIO_LIMITS,
  });
  await studio.services.publishing.publish(listingId);
});
afterAll(async () => {
  await studio.close();
  scratch.remove();
});

describe('retrieve', () => {
  it('returns the best chunks with their text, score and metadata', async () => {
    const result = await client.retrieve({ listingId, query: 'telescope galaxy', topK: 2 });
    expect(result).toMatchObject({
      listingId,
      queryId: expect.stringMatching(/^qry_/),
      latencyMs: expect.any(Number),
    });
    expect(result.chunks).toHaveLength(2);
    expect(result.chunks[0]).toEqual({
      text: ITEMS[2]!.text,
      score: expect.any(Number),
      sourceMetadata: expect.objectContaining({ source: 'notes.json', topic: 'space', year: 2022 }),
    });
    expect(result.chunks[0]!.score).toBeGreaterThan(result.chunks[1]!.score);
  });

  it('sends filters and minScore as the spec names them', async () => {
    const result = await client.retrieve({
      listingId,
      query: 'galaxy sauce banks',
      filters: { year: { $gte: 2023 } },
    });
    expect(result.chunks.map((c) => c.sourceMetadata.topic)).toEqual(['finance']);
    const none = await client.retrieve({ listingId, query: 'galaxy telescope', minScore: 1 });
    expect(none.chunks).toEqual([]);
  });

  it('gives the raw response, request id and rate-limit headers through withResponse()', async () => {
    const { data, response, requestId, rateLimit } = await client
      .retrieve({ listingId, query: 'pasta sauce', topK: 1 })
      .withResponse();
    expect(data.chunks[0]!.text).toBe(ITEMS[3]!.text);
    expect(response.status).toBe(200);
    expect(requestId).toBe(response.headers.get('x-request-id'));
    expect(requestId).toMatch(/\S/);
    expect(rateLimit.limit).toBeGreaterThan(0);
    expect(rateLimit.remaining).toBeLessThan(rateLimit.limit!);
    expect(rateLimit.reset).toBeGreaterThan(Date.now() / 1000 - 1);
  });
});

describe('retrieveStream', () => {
  it('yields the same chunks as retrieve, in order, then exposes the done summary', async () => {
    const params = { listingId, query: 'physician medication illness', topK: 4 };
    const whole = await client.retrieve(params);
    const stream = client.retrieveStream(params);
    const chunks: Chunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.text)).toEqual(whole.chunks.map((c) => c.text));
    expect(chunks[0]).toEqual({
      text: ITEMS[1]!.text,
      score: expect.any(Number),
      sourceMetadata: expect.any(Object),
    });
    expect(stream.summary).toEqual({
      listingId,
      queryId: expect.stringMatching(/^qry_/),
      latencyMs: expect.any(Number),
      count: 4,
    });
  });

  it('refuses to be read twice', async () => {
    const stream = client.retrieveStream({ listingId, query: 'fox', topK: 1 });
    for await (const _ of stream) void _;
    await expect(async () => {
      for await (const _ of stream) void _;
    }).rejects.toThrow(/read once/);
  });
});

describe('listings', () => {
  it('searches and gets listings', async () => {
    const page = await client.listings.search({ q: 'field notes', accessModel: 'one_time', maxPrice: 5 });
    expect(page.data.map((l) => l.id)).toEqual([listingId]);
    expect(page.pagination).toEqual({ total: 1, limit: 20, offset: 0, hasMore: false });
    expect(page.hasNextPage()).toBe(false);
    expect((await client.listings.search({ q: 'field notes', maxPrice: 0.5 })).data).toEqual([]);

    const listing = await client.listings.get(listingId);
    expect(listing).toMatchObject({
      id: listingId,
      title: 'Field notes',
      status: 'published',
      chunkCount: 5,
    });
  });

  it('searches with prices and ratings too small or large for plain String() digits, which the server reads', async () => {
    // Its own key: the shared one's rate limit is for the uploads' polling below.
    const own = new KnowledgeClient({
      baseUrl: `${studio.url}/v1`,
      apiKey: studio.services.apiKeys.create(generateKeypair().address).key,
    });
    const ids = async (params: Parameters<typeof own.listings.search>[0]) =>
      (await own.listings.search({ q: 'field notes', ...params })).data.map((l) => l.id);
    expect(await ids({ maxPrice: 1e21 })).toEqual([listingId]);
    expect(await ids({ maxPrice: 0.0000005 })).toEqual([]);
    expect(Array.isArray(await ids({ minRating: 1e-7 }))).toBe(true);
  });

  it('refuses the ids . and .. instead of fetching the page the URL resolves to', async () => {
    for (const id of ['.', '..']) {
      await expect(client.listings.get(id)).rejects.toThrow(/cannot be sent/);
      await expect(client.credentials.verify(id)).rejects.toThrow(/cannot be sent/);
    }
  });

  it('iterates over every page of a list, one request per page', async () => {
    const creator = generateKeypair().address;
    const ids = [];
    for (let i = 0; i < 7; i++) {
      ids.push(
        studio.services.listings.create(
          { title: `Paged ${i}`, domain: 'paging', accessModel: 'per_query', price: 0.01 },
          creator,
        ).id,
      );
    }
    const requests: string[] = [];
    const counting = new KnowledgeClient({
      baseUrl: studio.url,
      apiKey: studio.services.apiKeys.create(creator).key,
      fetch: (url, init) => {
        requests.push(url);
        return fetch(url, init);
      },
    });
    const seen = [];
    for await (const listing of counting.listings.list({ domain: 'paging', sort: 'newest', limit: 3 }))
      seen.push(listing.id);
    expect(seen).toEqual([...ids].reverse());
    expect(requests.map((u) => new URL(u).search)).toEqual([
      '?domain=paging&sort=newest&limit=3',
      '?domain=paging&sort=newest&limit=3&offset=3',
      '?domain=paging&sort=newest&limit=3&offset=6',
    ]);

    const first = await counting.listings.list({ domain: 'paging', limit: 5 });
    const second = await first.nextPage();
    expect(second.data.map((l) => l.id)).toEqual(ids.slice(0, 2).reverse());
    expect(second.hasNextPage()).toBe(false);
    expect(() => second.nextPage()).toThrow(/last page/);
  });
});

describe('credentials', () => {
  it('lists and verifies the caller’s credentials, with a wallet signature instead of a key', async () => {
    const signed = new KnowledgeClient({
      baseUrl: `${studio.url}/v1/`,
      signer: { address: buyer.address, sign: (message) => signMessage(buyer.secretKey, message) },
    });
    expect(await signed.credentials.verify(listingId)).toEqual({
      listingId,
      valid: false,
      status: 'not_found',
      onChainVerified: false,
    });
    await studio.services.credentials.grant(listingId, buyer.address);
    expect(await signed.credentials.verify(listingId)).toMatchObject({
      listingId,
      valid: true,
      status: 'active',
    });

    const page = await signed.credentials.list({ status: 'active' });
    expect(page.data).toEqual([
      expect.objectContaining({
        listingId,
        listingTitle: 'Field notes',
        holderWallet: buyer.address,
        status: 'active',
      }),
    ]);
    expect((await signed.credentials.list({ status: 'expired' })).data).toEqual([]);
    const all = [];
    for await (const credential of signed.credentials.list({ limit: 1 })) all.push(credential.listingId);
    expect(all).toEqual([listingId]);

    // The buyer can now retrieve; a new signature per request (each is accepted once).
    const result = await signed.retrieve({ listingId, query: 'stock markets banks', topK: 1 });
    expect(result.chunks[0]!.text).toBe(ITEMS[4]!.text);
    const streamed = [];
    for await (const chunk of signed.retrieveStream({ listingId, query: 'stock markets banks', topK: 1 }))
      streamed.push(chunk.text);
    expect(streamed).toEqual([ITEMS[4]!.text]);
  });
});

describe('uploads', () => {
  it('uploads a ZIP read lazily from disk, reports progress, and follows the upload to its end', async () => {
    const progress: number[] = [];
    let total = 0;
    const zip = join(FIXTURES, 'simple.zip');
    const accepted = await client.upload(
      new File([await openAsBlob(zip)], 'simple.zip'),
      { chunking: 'recursive', embeddingModel: 'kbs-offline-hybrid-v1' },
      { onProgress: (p) => (progress.push(p.loaded), (total = p.total)) },
    );
    expect(accepted).toMatchObject({
      uploadId: expect.stringMatching(/^upl_/),
      listingId: expect.stringMatching(/^lst_/),
      status: 'queued',
    });
    expect(accepted.config).toMatchObject({
      chunking: 'recursive',
      embedding_model: 'kbs-offline-hybrid-v1',
    });
    expect(total).toBeGreaterThan(readFileSync(zip).length);
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(total);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);

    const done = await client.uploads.wait(accepted.uploadId, { pollIntervalMs: 50 });
    expect(done.status).toBe('completed');
    expect(done.files.map((f) => [f.source, f.status])).toEqual(
      expect.arrayContaining([
        ['ideas-page.html', 'ingested'],
        ['stanley-cups.csv', 'ingested'],
      ]),
    );
    expect(await client.uploads.get(accepted.uploadId)).toEqual(done);
    const found = await client.retrieve({
      listingId: done.listingId,
      query: 'Maple Leafs Stanley Cups',
      topK: 1,
    });
    expect(found.chunks[0]!.text).toMatch(/Maple Leafs/);
  });

  it('adds a named in-memory file to an existing listing, in the config’s listingId', async () => {
    const markdown = new TextEncoder().encode(
      '# Tides\n\nThe moon pulls the oceans into two tidal bulges.\n',
    );
    const accepted = await client.upload(
      { name: 'tides.md', data: markdown },
      { listingId, chunking: 'markdown' },
    );
    expect(accepted.listingId).toBe(listingId);
    const done = await client.uploads.wait(accepted.uploadId, { pollIntervalMs: 50 });
    expect(done).toMatchObject({
      status: 'completed',
      files: [expect.objectContaining({ source: 'tides.md', status: 'ingested' })],
    });
    const found = await client.retrieve({ listingId, query: 'moon tidal bulges', topK: 1 });
    expect(found.chunks[0]!.text).toMatch(/tidal bulges/);
  });

  it('refuses an upload signed by a wallet before sending anything', async () => {
    const signed = new KnowledgeClient({
      baseUrl: studio.url,
      signer: { address: buyer.address, sign: () => new Uint8Array(64) },
    });
    await expect(signed.upload(new Blob(['x']))).rejects.toThrow(/Uploads need an API key/);
    await expect(client.upload([])).rejects.toThrow(/at least one file/);
  });
});
