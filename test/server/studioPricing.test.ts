import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/wallets/keypair';
import { json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let listingId: string;
let creatorKey: string;

const call = (path: string, method = 'GET', body?: unknown) =>
  studio.api(path, {
    method,
    headers: {
      'X-Studio-Token': studio.studioToken,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });

const pricing = {
  accessModel: 'subscription',
  price: 0.25,
  subscriptionDays: 30,
  retrievalRateLimit: 12,
  domain: ' law ',
  tags: ['contracts', 'EU'],
};

beforeAll(async () => {
  studio = await startStudio();
  const wallet = studio.services.wallets.defaultWallet().address;
  creatorKey = studio.services.apiKeys.create(wallet).key;
  listingId = studio.services.listings.create(
    { title: 'Case law', accessModel: 'one_time', price: 1 },
    wallet,
  ).id;
});
afterAll(() => studio.close());

describe('PUT /studio/listings/:id/pricing', () => {
  it('stores the access model, price, period, rate limit, domain and tags', async () => {
    const res = await call(`/studio/listings/${listingId}/pricing`, 'PUT', pricing);
    expect(res.status).toBe(200);
    expect((await json(res)).data).toMatchObject({
      accessModel: 'subscription',
      price: 0.25,
      subscriptionDays: 30,
      retrievalRateLimit: 12,
      domain: 'law',
      tags: ['contracts', 'eu'],
    });
  });

  it('answers 400 with the same per-field messages the form shows', async () => {
    const cases: [Record<string, unknown>, string, string][] = [
      [{ accessModel: 'per_query', price: 0, subscriptionDays: null }, 'price', 'needs a price above 0 SOL'],
      [{ subscriptionDays: null }, 'subscriptionDays', 'needs its period length in days'],
      [{ price: 0.0000000001 }, 'price', 'at most 9 decimals'],
      [{ price: -1 }, 'price', 'cannot be negative'],
      [{ retrievalRateLimit: 0 }, 'retrievalRateLimit', 'at least 1 retrieval per minute'],
      [{ accessModel: 'one_time' }, 'subscriptionDays', 'Only subscriptions have a period'],
    ];
    for (const [patch, field, text] of cases) {
      const res = await call(`/studio/listings/${listingId}/pricing`, 'PUT', { ...pricing, ...patch });
      expect(res.status, field).toBe(400);
      const body = await json(res);
      expect(body.error.code).toBe('invalid_request');
      expect(body.error.message, JSON.stringify(patch)).toContain(field);
      expect(body.error.message.toLowerCase()).toContain(text.toLowerCase());
    }
  });
});

describe('GET /studio/listings/:id/public', () => {
  it('is exactly the body GET /v1/listings/:id gives the creator, draft included', async () => {
    const preview = await call(`/studio/listings/${listingId}/public`);
    expect(preview.status).toBe(200);
    const v1 = await studio.api(`/v1/listings/${listingId}`, { key: creatorKey });
    expect(v1.status).toBe(200);
    expect(await json(preview)).toEqual(await json(v1));
  });

  it('shows a draft nobody else can see yet', async () => {
    const other = studio.services.apiKeys.create(generateKeypair().address).key;
    const res = await studio.api(`/v1/listings/${listingId}`, { key: other });
    expect(res.status).toBe(404);
    expect((await json(await call(`/studio/listings/${listingId}/public`))).data.status).toBe('draft');
  });

  it('answers 404 listing_not_found for an unknown listing', async () => {
    const res = await call('/studio/listings/lst_nope/public');
    expect(res.status).toBe(404);
    expect((await json(res)).error.code).toBe('listing_not_found');
  });
});
