import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/wallets/keypair';
import type { Listing } from '../../src/shared/listings';
import { json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let buyerKey: string;
const buyer = generateKeypair().address;
let once: Listing;
let sub: Listing;
let perQuery: Listing;

const studioCall = (path: string, method = 'GET', body?: unknown) =>
  studio.api(path, {
    method,
    headers: {
      'X-Studio-Token': studio.studioToken,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });

async function publish(input: Record<string, unknown>): Promise<Listing> {
  const created = await json(await studioCall('/studio/listings', 'POST', { title: 'KB', ...input }));
  const res = await studioCall(`/studio/listings/${created.data.id}/publish`, 'POST');
  expect(res.status).toBe(200);
  return (await json(res)).data;
}

const verify = async (listingId: string) => {
  const res = await studio.api(`/v1/credentials/${listingId}`, { key: buyerKey });
  expect(res.status).toBe(200);
  return (await json(res)).data;
};

beforeAll(async () => {
  studio = await startStudio();
  buyerKey = studio.services.apiKeys.create(buyer).key;
  once = await publish({ title: 'Once', accessModel: 'one_time', price: 2 });
  sub = await publish({ title: 'Monthly', accessModel: 'subscription', price: 0.5, subscriptionDays: 30 });
  perQuery = await publish({ title: 'Metered', accessModel: 'per_query', price: 0.001 });
});
afterAll(() => studio.close());

describe('publishing through the studio', () => {
  it('signs create_listing and records the listing PDA', () => {
    expect(once).toMatchObject({
      status: 'published',
      pdaAddress: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/),
    });
    const entry = studio.services.db
      .prepare(`SELECT instruction, wallet, signature FROM ledger_entries WHERE listing_id = ?`)
      .get(once.id);
    expect(entry).toEqual({
      instruction: 'create_listing',
      wallet: once.creatorWallet,
      signature: expect.any(String),
    });
  });
});

describe('GET /v1/credentials/:listing_id', () => {
  it('reports not_found, then each status of each access model, then not_found after a revocation', async () => {
    for (const listing of [once, sub, perQuery]) {
      expect(await verify(listing.id)).toEqual({
        listingId: listing.id,
        valid: false,
        status: 'not_found',
        onChainVerified: false,
      });
    }

    const grant = async (body: Record<string, unknown>) => {
      const res = await studioCall('/studio/credentials', 'POST', { wallet: buyer, ...body });
      expect(res.status).toBe(201);
      return (await json(res)).data;
    };

    await grant({ listingId: once.id });
    expect(await verify(once.id)).toEqual({
      listingId: once.id,
      valid: true,
      status: 'active',
      pdaAddress: expect.any(String),
      onChainVerified: false,
    });

    const future = new Date(Date.now() + 86_400_000).toISOString();
    await grant({ listingId: sub.id, expiresAt: future });
    expect(await verify(sub.id)).toEqual({
      listingId: sub.id,
      valid: true,
      status: 'active',
      expiresAt: future,
      pdaAddress: expect.any(String),
      onChainVerified: false,
    });
    await grant({ listingId: sub.id, expires_at: '2024-05-01T00:00:00Z' });
    expect(await verify(sub.id)).toEqual({
      listingId: sub.id,
      valid: false,
      status: 'expired',
      expiresAt: '2024-05-01T00:00:00.000Z',
      pdaAddress: expect.any(String),
      onChainVerified: false,
    });

    await grant({ listingId: perQuery.id, balance: 0.0005 });
    expect(await verify(perQuery.id)).toEqual({
      listingId: perQuery.id,
      valid: false,
      status: 'low_balance',
      pdaAddress: expect.any(String),
      onChainVerified: false,
    });
    await grant({ listingId: perQuery.id, balance: 0.001 });
    expect(await verify(perQuery.id)).toMatchObject({ valid: true, status: 'active' });

    // Spec §4: the caller's active credentials; the status filter asks for the others.
    const list = await json(await studio.api('/v1/credentials', { key: buyerKey }));
    expect(list.pagination).toEqual({ total: 2, limit: 20, offset: 0, hasMore: false });
    expect(
      list.data.map((c: { listingTitle: string; status: string }) => [c.listingTitle, c.status]),
    ).toEqual([
      ['Metered', 'active'],
      ['Once', 'active'],
    ]);

    expect(list.data[0]).toEqual({
      listingId: perQuery.id,
      listingTitle: 'Metered',
      holderWallet: buyer,
      accessModel: 'per_query',
      status: 'active',
      expiresAt: null,
      balance: 0.001,
      pdaAddress: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const expired = await json(await studio.api('/v1/credentials?status=expired', { key: buyerKey }));
    expect(expired.data.map((c: { listingId: string }) => c.listingId)).toEqual([sub.id]);
    const paged = await json(await studio.api('/v1/credentials?limit=1&offset=1', { key: buyerKey }));
    expect(paged.pagination).toEqual({ total: 2, limit: 1, offset: 1, hasMore: false });
    expect(paged.data.map((c: { listingId: string }) => c.listingId)).toEqual([once.id]);

    const revoked = await studioCall('/studio/credentials/revoke', 'POST', {
      listingId: once.id,
      wallet: buyer,
    });
    expect((await json(revoked)).data).toEqual({ listingId: once.id, wallet: buyer, refunded: 0 });
    expect(await verify(once.id)).toEqual({
      listingId: once.id,
      valid: false,
      status: 'not_found',
      onChainVerified: false,
    });
    const again = await studioCall('/studio/credentials/revoke', 'POST', {
      listingId: once.id,
      wallet: buyer,
    });
    expect(again.status).toBe(404);
  });

  it('answers 404 listing_not_found for an unknown listing and 400 for bad list parameters', async () => {
    const missing = await studio.api('/v1/credentials/lst_doesnotexist', { key: buyerKey });
    expect(missing.status).toBe(404);
    expect((await json(missing)).error).toMatchObject({
      code: 'listing_not_found',
      message: "Listing 'lst_doesnotexist' was not found.",
    });
    const badStatus = await studio.api('/v1/credentials?status=revoked', { key: buyerKey });
    expect(badStatus.status).toBe(400);
    expect((await json(badStatus)).error.message).toMatch(/^status: /);
    expect((await studio.api('/v1/credentials?limit=101', { key: buyerKey })).status).toBe(400);
    expect((await studio.api('/v1/credentials')).status).toBe(401);
  });

  it('is documented in the OpenAPI document', async () => {
    const doc = await json(await studio.api('/v1/openapi.json'));
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/credentials', '/v1/credentials/{listing_id}']),
    );
    expect(doc.components.schemas.CredentialVerification.required).toEqual([
      'listingId',
      'valid',
      'status',
      'onChainVerified',
    ]);
  });
});

describe('studio test buyers, purchases, earnings and withdrawal', () => {
  it('validates grants with field-named 400s', async () => {
    const bad = await studioCall('/studio/credentials', 'POST', {
      listingId: sub.id,
      wallet: buyer,
      expiresAt: 'soon',
    });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toMatch(/^expiresAt: expected an ISO 8601 date-time/);
    const wrongModel = await studioCall('/studio/credentials', 'POST', {
      listingId: once.id,
      wallet: buyer,
      balance: 1,
    });
    expect((await json(wrongModel)).error.message).toBe('balance: does not apply to a one_time credential.');
  });

  it('sells access to a held wallet, counts the earnings and withdraws exactly them', async () => {
    const held = studio.services.wallets.create('shopper').address;
    const bought = await studioCall('/studio/credentials/purchase', 'POST', {
      listingId: sub.id,
      wallet: held,
      periods: 3,
    });
    expect(bought.status).toBe(201);
    expect((await json(bought)).data).toMatchObject({
      paid: 1.5,
      credential: { status: 'active', testGrant: false },
    });
    const earnings = await json(await studioCall(`/studio/listings/${sub.id}/earnings`));
    expect(earnings.data).toEqual({ listingId: sub.id, earned: 1.5, withdrawn: 0, withdrawable: 1.5 });
    const withdrawn = await json(await studioCall(`/studio/listings/${sub.id}/withdraw`, 'POST'));
    expect(withdrawn.data).toEqual({ listingId: sub.id, amount: 1.5, signature: expect.any(String) });
    const nothing = await json(await studioCall(`/studio/listings/${sub.id}/withdraw`, 'POST'));
    expect(nothing.data).toEqual({ listingId: sub.id, amount: 0, signature: null });
    expect((await json(await studioCall(`/studio/listings/${sub.id}/earnings`))).data).toEqual({
      listingId: sub.id,
      earned: 1.5,
      withdrawn: 1.5,
      withdrawable: 0,
    });
    const all = await json(await studioCall(`/studio/credentials?listingId=${sub.id}`));
    expect(
      all.data.map((c: { holderWallet: string; testGrant: boolean }) => [c.holderWallet, c.testGrant]),
    ).toEqual(
      expect.arrayContaining([
        [held, false],
        [buyer, true],
      ]),
    );
  });
});
