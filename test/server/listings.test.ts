import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingRecord } from '../../src/core/marketplace/listings';
import { solToLamports } from '../../src/core/money';
import { SqliteListingRepository } from '../../src/db/repositories/listings';
import type { Listing } from '../../src/shared/listings';
import { startStudio, type TestStudio, json } from '../helpers/studio';

let studio: TestStudio;
let key: string;
let otherKey: string;
let wallet: string;

type Seed = Partial<ListingRecord> & Pick<ListingRecord, 'id' | 'title'>;

function seed(records: Seed[]) {
  const repo = new SqliteListingRepository(studio.services.db);
  records.forEach((r, i) =>
    repo.insert({
      description: '',
      domain: 'general',
      tags: [],
      accessModel: 'one_time',
      priceLamports: solToLamports(1),
      subscriptionDays: null,
      rating: 0,
      ratingCount: 0,
      creatorWallet: wallet,
      status: 'published',
      retrievalRateLimit: 60,
      retrievalDenseWeight: null,
      embeddingModel: 'text-embedding-3-small',
      dimensions: 1536,
      documentCount: 0,
      chunkCount: 0,
      pdaAddress: null,
      createdAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
      updatedAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
      ...r,
    }),
  );
}

beforeAll(async () => {
  studio = await startStudio();
  wallet = studio.services.wallets.defaultWallet().address;
  key = studio.services.apiKeys.create(wallet).key;
  otherKey = studio.services.apiKeys.create(studio.services.wallets.create('other').address).key;
  // Inserted oldest first: "newest" is the reverse of this order.
  seed([
    {
      id: 'lst_contracts',
      title: 'Contract law essentials',
      description: 'Clauses, remedies and breach of contract.',
      domain: 'legal',
      tags: ['law', 'contracts'],
      accessModel: 'one_time',
      priceLamports: solToLamports(2),
      rating: 4.5,
      ratingCount: 10,
    },
    {
      id: 'lst_cardio',
      title: 'Cardiology guidelines',
      description: 'Heart failure treatment protocols.',
      domain: 'medicine',
      tags: ['heart'],
      accessModel: 'subscription',
      subscriptionDays: 30,
      priceLamports: solToLamports(0.5),
      rating: 4.9,
      ratingCount: 3,
    },
    {
      id: 'lst_tax',
      title: 'Tax code digest',
      description: 'Corporate tax rules and contract tax clauses.',
      domain: 'legal',
      tags: ['tax'],
      accessModel: 'per_query',
      priceLamports: solToLamports(0.001),
      rating: 3.2,
      ratingCount: 40,
    },
    {
      id: 'lst_rust',
      title: 'Rust async book',
      description: 'Futures, executors and pinning.',
      domain: 'software',
      tags: ['rust', 'async'],
      accessModel: 'subscription',
      subscriptionDays: 365,
      priceLamports: solToLamports(5),
      rating: 4.9,
      ratingCount: 50,
    },
    {
      id: 'lst_draft_mine',
      title: 'Unreleased contract templates',
      domain: 'legal',
      status: 'draft',
      priceLamports: solToLamports(1),
    },
    {
      id: 'lst_draft_other',
      title: 'Secret contract playbook',
      domain: 'legal',
      status: 'draft',
      creatorWallet: 'OtherWa11etAddressXXXXXXXXXXXXXXXXXXXXXXXX1',
    },
  ]);
});
afterAll(() => studio.close());

async function search(
  query: string,
  k = key,
): Promise<{ ids: string[]; body: { data: Listing[]; pagination: Record<string, unknown> } }> {
  const res = await studio.api(`/v1/listings${query}`, { key: k });
  expect(res.status).toBe(200);
  const body = await json(res);
  return { ids: body.data.map((l: Listing) => l.id), body };
}

describe('GET /v1/listings', () => {
  it("lists published listings and the caller's own drafts, newest first, in the data envelope", async () => {
    const { ids, body } = await search('');
    expect(ids).toEqual(['lst_draft_mine', 'lst_rust', 'lst_tax', 'lst_cardio', 'lst_contracts']);
    expect(body.pagination).toEqual({ total: 5, limit: 20, offset: 0, hasMore: false });
    const contracts = body.data.find((l) => l.id === 'lst_contracts')!;
    expect(contracts).toMatchObject({
      price: 2,
      accessModel: 'one_time',
      domain: 'legal',
      tags: ['law', 'contracts'],
      rating: 4.5,
    });
  });

  it("hides other wallets' drafts", async () => {
    const { ids } = await search('', otherKey);
    expect(ids).not.toContain('lst_draft_mine');
    expect(ids).not.toContain('lst_draft_other');
  });

  it('q searches title, description, domain and tags, ranked by relevance', async () => {
    const { ids } = await search('?q=contract');
    // Title matches rank above the description-only match; drafts of others never appear.
    expect(ids[2]).toBe('lst_tax');
    expect(new Set(ids)).toEqual(new Set(['lst_contracts', 'lst_tax', 'lst_draft_mine']));
    expect((await search('?q=heart')).ids).toEqual(['lst_cardio']);
    expect((await search('?q=software')).ids).toEqual(['lst_rust']);
    expect((await search('?q=asyn')).ids).toEqual(['lst_rust']); // prefix while typing
    expect((await search('?q=contract%20tax')).ids).toEqual(['lst_tax']); // every word must match
    expect((await search('?q=%22OR%20*%20NEAR(')).ids).toEqual([]); // FTS syntax is inert
    // No letter or digit: nothing matches; a blank query is no query.
    const punctuation = await search('?q=%21%21%21');
    expect(punctuation.ids).toEqual([]);
    expect(punctuation.body.pagination).toEqual({ total: 0, limit: 20, offset: 0, hasMore: false });
    expect((await search('?q=%20%20')).ids).toEqual((await search('')).ids);
  });

  it('filters by domain, accessModel, maxPrice and minRating', async () => {
    expect(new Set((await search('?domain=LEGAL')).ids)).toEqual(
      new Set(['lst_contracts', 'lst_tax', 'lst_draft_mine']),
    );
    expect((await search('?accessModel=subscription')).ids).toEqual(['lst_rust', 'lst_cardio']);
    expect((await search('?access_model=per_query')).ids).toEqual(['lst_tax']);
    expect((await search('?maxPrice=0.5')).ids).toEqual(['lst_tax', 'lst_cardio']);
    expect((await search('?max_price=2')).ids).toEqual([
      'lst_draft_mine',
      'lst_tax',
      'lst_cardio',
      'lst_contracts',
    ]);
    expect((await search('?minRating=4.6')).ids).toEqual(['lst_rust', 'lst_cardio']);
    expect((await search('?domain=legal&minRating=4')).ids).toEqual(['lst_contracts']);
  });

  it('bounds maxPrice to the lamport at or below it, and ignores case in domain beyond ASCII', async () => {
    expect((await search('?maxPrice=0.4999999999999')).ids).toEqual(['lst_tax']);
    expect((await search('?maxPrice=0.0009999999999')).ids).toEqual([]);
    expect((await search('?maxPrice=0.001')).ids).toEqual(['lst_tax']);
    studio.services.listings.update('lst_cardio', { domain: 'Médecine' });
    try {
      for (const domain of ['m%C3%A9decine', 'M%C3%89DECINE', 'Me%CC%81decine']) {
        expect((await search(`?domain=${domain}`)).ids, domain).toEqual(['lst_cardio']);
      }
    } finally {
      studio.services.listings.update('lst_cardio', { domain: 'medicine' });
    }
  });

  it('sorts five ways', async () => {
    expect((await search('?sort=newest')).ids).toEqual([
      'lst_draft_mine',
      'lst_rust',
      'lst_tax',
      'lst_cardio',
      'lst_contracts',
    ]);
    expect((await search('?sort=rating')).ids).toEqual([
      'lst_rust',
      'lst_cardio',
      'lst_contracts',
      'lst_tax',
      'lst_draft_mine',
    ]);
    expect((await search('?sort=price_asc')).ids).toEqual([
      'lst_tax',
      'lst_cardio',
      'lst_draft_mine',
      'lst_contracts',
      'lst_rust',
    ]);
    expect((await search('?sort=price_desc')).ids).toEqual([
      'lst_rust',
      'lst_contracts',
      'lst_draft_mine',
      'lst_cardio',
      'lst_tax',
    ]);
    expect((await search('?sort=relevance&q=contract')).ids[2]).toBe('lst_tax');
    expect((await search('?q=breach%20remedies')).ids).toEqual(['lst_contracts']);
    // relevance without q falls back to newest
    expect((await search('?sort=relevance')).ids[0]).toBe('lst_draft_mine');
    expect((await search('?q=contract&sort=price_asc')).ids).toEqual([
      'lst_tax',
      'lst_draft_mine',
      'lst_contracts',
    ]);
  });

  it('paginates with limit and offset', async () => {
    const first = await search('?limit=2');
    expect(first.ids).toEqual(['lst_draft_mine', 'lst_rust']);
    expect(first.body.pagination).toEqual({ total: 5, limit: 2, offset: 0, hasMore: true });
    const last = await search('?limit=2&offset=4');
    expect(last.ids).toEqual(['lst_contracts']);
    expect(last.body.pagination).toEqual({ total: 5, limit: 2, offset: 4, hasMore: false });
  });

  it.each([
    ['?limit=101', 'limit'],
    ['?limit=0', 'limit'],
    ['?limit=abc', 'limit'],
    ['?offset=-1', 'offset'],
    ['?accessModel=free', 'accessModel'],
    ['?sort=cheapest', 'sort'],
    ['?maxPrice=cheap', 'maxPrice'],
    ['?maxPrice=-1', 'maxPrice'],
    ['?minRating=6', 'minRating'],
    // Numbers are decimal digits: Number() would have read these as 16, 10, 2, 0 and 0.
    ['?limit=0x10', 'limit'],
    ['?limit=1e1', 'limit'],
    ['?limit=%202', 'limit'],
    ['?offset=', 'offset'],
    ['?maxPrice=', 'maxPrice'],
    ['?maxPrice=0x1', 'maxPrice'],
    ['?minRating=Infinity', 'minRating'],
  ])('%s is a 400 naming the field', async (query, field) => {
    const res = await studio.api(`/v1/listings${query}`, { key });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(body.error.message).toMatch(new RegExp(`^${field}: `));
    expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('says what a number must look like', async () => {
    const messages = await Promise.all(
      ['?limit=0x10', '?maxPrice=', '?limit=500', `?maxPrice=1${'0'.repeat(400)}`].map(
        async (query) => (await json(await studio.api(`/v1/listings${query}`, { key }))).error.message,
      ),
    );
    expect(messages[0]).toBe('limit: must be a whole number written in decimal digits');
    expect(messages[1]).toBe('maxPrice: must be a number written in decimal digits, like 0.5');
    expect(messages[2]).toMatch(/^limit: .*100/);
    // Digits past a double's range read as Infinity: not "not written in digits".
    expect(messages[3]).toBe('maxPrice: is too large a number');
    expect((await search('?maxPrice=.5&limit=007&offset=0')).body.pagination).toMatchObject({ limit: 7 });
  });

  it('a parameter given twice is a 400 saying so; an unknown one given twice is ignored', async () => {
    for (const query of ['?limit=1&limit=2', '?access_model=one_time&access_model=subscription']) {
      const res = await studio.api(`/v1/listings${query}`, { key });
      expect(res.status).toBe(400);
      expect((await json(res)).error.message).toMatch(
        /^(limit|accessModel): given 2 times \(.+\); send it once\.$/,
      );
    }
    expect((await studio.api('/v1/listings?utm=a&utm=b', { key })).status).toBe(200);
  });

  it('a known parameter in brackets (qs-style arrays and objects) is a 400, not an unfiltered page', async () => {
    for (const [query, message] of [
      ['?q[]=sample', "q: given as 'q[]'; send it once, as q=value."],
      ['?limit[x]=1', "limit: given as 'limit[x]'; send it once, as limit=value."],
      [
        '?access_model[]=one_time',
        "accessModel: given as 'access_model[]'; send it once, as access_model=value.",
      ],
    ]) {
      const res = await studio.api(`/v1/listings${query}`, { key });
      expect(res.status).toBe(400);
      expect((await json(res)).error.message).toBe(message);
    }
    expect((await studio.api('/v1/listings?utm[]=a', { key })).status).toBe(200);
  });
});

describe('GET /v1/listings/:id', () => {
  it('returns one listing in the data envelope', async () => {
    const res = await studio.api('/v1/listings/lst_cardio', { key });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.data).toMatchObject({
      id: 'lst_cardio',
      accessModel: 'subscription',
      subscriptionDays: 30,
      price: 0.5,
    });
  });

  it("404s with listing_not_found for unknown listings and for other wallets' drafts", async () => {
    for (const [id, k] of [
      ['lst_nope', key],
      ['lst_draft_other', key],
      ['lst_draft_mine', otherKey],
    ] as const) {
      const res = await studio.api(`/v1/listings/${id}`, { key: k });
      expect(res.status).toBe(404);
      const body = await json(res);
      expect(body.error).toMatchObject({ code: 'listing_not_found', status: 404 });
      expect(body.error.message).toContain(id);
    }
    expect((await studio.api('/v1/listings/lst_draft_mine', { key })).status).toBe(200);
  });
});

describe('a listing id of any length', () => {
  it('is 404 listing_not_found, not a 400, wherever /v1 takes a listing id', async () => {
    const ids = [`lst_${'x'.repeat(97)}`, `lst_${'y'.repeat(10_000)}`];
    const post = (path: string, body: unknown) =>
      studio.api(path, {
        key,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const uploadTo = (id: string) => {
      const form = new FormData();
      form.append('files', new Blob(['# A\n\ntext']), 'a.md');
      form.append('config', JSON.stringify({ listing_id: id }));
      return studio.api('/v1/upload', { key, method: 'POST', body: form });
    };
    for (const id of ids) {
      const calls: [string, () => Promise<Response>][] = [
        ['GET /v1/listings/:id', () => studio.api(`/v1/listings/${id}`, { key })],
        ['GET /v1/credentials/:listing_id', () => studio.api(`/v1/credentials/${id}`, { key })],
        ['POST /v1/retrieve', () => post('/v1/retrieve', { listingId: id, query: 'q' })],
        ['POST /v1/retrieve/stream', () => post('/v1/retrieve/stream', { listing_id: id, query: 'q' })],
        ['POST /v1/upload', () => uploadTo(id)],
      ];
      for (const [what, call] of calls) {
        const res = await call();
        const body = await json(res);
        expect(res.status, `${what} (${id.length} characters): ${body.error?.message}`).toBe(404);
        expect(body.error.code, what).toBe('listing_not_found');
      }
    }
    // An upload id too: an unknown one is 404, however long.
    const upload = await studio.api(`/v1/upload/upl_${'z'.repeat(200)}`, { key });
    expect(upload.status).toBe(404);
    expect((await json(upload)).error.code).toBe('not_found');
  });
});
