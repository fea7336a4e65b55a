import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKeypair } from '../../src/core/wallets/keypair';
import type { Listing } from '../../src/shared/listings';
import { json, startStudio, type TestStudio } from '../helpers/studio';

let studio: TestStudio;
let sub: Listing;
let metered: Listing;

const call = (path: string, method = 'GET', body?: unknown) =>
  studio.api(path, {
    method,
    headers: {
      'X-Studio-Token': studio.studioToken,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });

async function published(input: Record<string, unknown>): Promise<Listing> {
  const creator = studio.services.wallets.defaultWallet().address;
  const listing = studio.services.listings.create(
    { title: 'KB', accessModel: 'one_time', price: 1, ...input },
    creator,
  );
  return studio.services.publishing.publish(listing.id);
}

const newBuyer = async (): Promise<string> => {
  const res = await call('/studio/buyers', 'POST', {});
  expect(res.status).toBe(201);
  return (await json(res)).data.address;
};

const setState = (listingId: string, wallet: string, state: string) =>
  call('/studio/buyers/credential', 'POST', { listingId, wallet, state });

/** A query with the API key the playground gets when acting as `wallet`. */
async function queryAs(listingId: string, wallet: string) {
  const key = await json(await call(`/studio/listings/${listingId}/playground-key?wallet=${wallet}`));
  expect(key.data.wallet).toBe(wallet);
  return studio.api('/v1/retrieve', {
    method: 'POST',
    key: key.data.apiKey,
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ listingId, query: 'anything' }),
  });
}

beforeAll(async () => {
  studio = await startStudio();
  sub = await published({ title: 'Monthly', accessModel: 'subscription', price: 0.5, subscriptionDays: 30 });
  metered = await published({
    title: 'Metered',
    accessModel: 'per_query',
    price: 0.002,
    retrievalRateLimit: 1,
  });
});
afterAll(() => studio.close());

describe('test buyer wallets', () => {
  it('creates local keypairs named test-buyer-<n> that never become the default wallet', async () => {
    const first = await json(await call('/studio/buyers', 'POST', {}));
    const second = await json(await call('/studio/buyers', 'POST', { name: 'alice' }));
    expect(first.data).toMatchObject({ name: expect.stringMatching(/^test-buyer-\d+$/), isDefault: false });
    expect(second.data.name).toBe('test-buyer-alice');
    const { data } = await json(await call(`/studio/listings/${sub.id}/buyers`));
    expect(data.map((b: { wallet: string }) => b.wallet)).toEqual(
      expect.arrayContaining([first.data.address, second.data.address]),
    );
  });
});

describe('credential states and what the buyer gets from /v1/retrieve', () => {
  it('an expired subscription is a 403 credential_expired for the buyer', async () => {
    const buyer = await newBuyer();
    const res = await setState(sub.id, buyer, 'expired');
    expect(res.status).toBe(200);
    const { data } = await json(res);
    expect(data).toMatchObject({ holderWallet: buyer, status: 'expired', testGrant: true });
    expect(Date.parse(data.expiresAt)).toBeLessThan(Date.now());
    const denied = await queryAs(sub.id, buyer);
    expect(denied.status).toBe(403);
    const body = await json(denied);
    expect(body.error.code).toBe('credential_expired');
    expect(body.error.message).toContain(`expired at ${data.expiresAt}`);

    await setState(sub.id, buyer, 'active');
    expect((await queryAs(sub.id, buyer)).status).not.toBe(403);
  });

  it('a revoked credential is gone: the list shows none and the buyer gets credential_not_found', async () => {
    const buyer = await newBuyer();
    const res = await setState(sub.id, buyer, 'revoked');
    expect(res.status).toBe(200);
    expect((await json(res)).data).toBeNull();
    const { data } = await json(await call(`/studio/listings/${sub.id}/buyers`));
    expect(data.find((b: { wallet: string }) => b.wallet === buyer)).toMatchObject({ credential: null });
    const denied = await queryAs(sub.id, buyer);
    expect(denied.status).toBe(403);
    expect((await json(denied)).error.code).toBe('credential_not_found');
  });

  it('a low or zero per-query balance is a 403 insufficient_balance', async () => {
    const buyer = await newBuyer();
    const low = await json(await setState(metered.id, buyer, 'low_balance'));
    expect(low.data).toMatchObject({ status: 'low_balance', balance: 0.001 });
    const denied = await queryAs(metered.id, buyer);
    expect(denied.status).toBe(403);
    expect((await json(denied)).error.code).toBe('insufficient_balance');
    const zero = await json(await setState(metered.id, buyer, 'zero_balance'));
    expect(zero.data).toMatchObject({ status: 'low_balance', balance: 0 });
  });

  it('over the listing’s retrieval rate limit the buyer gets a 429 with Retry-After', async () => {
    const buyer = await newBuyer();
    await setState(metered.id, buyer, 'active');
    expect((await queryAs(metered.id, buyer)).status).not.toBe(429);
    const limited = await queryAs(metered.id, buyer);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await json(limited)).error.code).toBe('rate_limited');
  });

  it('refuses a state the access model does not have, and wallets the studio does not hold', async () => {
    const buyer = await newBuyer();
    const res = await setState(sub.id, buyer, 'low_balance');
    expect(res.status).toBe(400);
    expect((await json(res)).error.message).toContain(
      "'low_balance' does not apply to a subscription listing",
    );
    const stranger = generateKeypair().address;
    const key = await call(`/studio/listings/${sub.id}/playground-key?wallet=${stranger}`);
    expect(key.status).toBe(404);
  });

  it('names every wallet the studio holds but the creator, and sets and queries as any of them', async () => {
    // As `kbstudio wallet create --name buyer1` and `kbstudio credentials grant --wallet buyer1` do.
    const buyer1 = studio.services.wallets.create('buyer1');
    const idle = studio.services.wallets.create('buyer-idle');
    await studio.services.credentials.grant(sub.id, buyer1.address);
    const rows = async () =>
      (await json(await call(`/studio/listings/${sub.id}/buyers`))).data as {
        wallet: string;
        name: string | null;
        credential: { status: string } | null;
      }[];
    const listed = await rows();
    expect(listed.find((b) => b.wallet === buyer1.address)).toMatchObject({
      name: 'buyer1',
      credential: { status: 'active', testGrant: true },
    });
    expect(listed.find((b) => b.wallet === idle.address)).toMatchObject({
      name: 'buyer-idle',
      credential: null,
    });
    expect(listed.some((b) => b.wallet === sub.creatorWallet)).toBe(false);

    expect((await setState(sub.id, buyer1.address, 'expired')).status).toBe(200);
    expect((await rows()).find((b) => b.wallet === buyer1.address)?.credential?.status).toBe('expired');
    const res = await queryAs(sub.id, buyer1.address);
    expect(res.status).toBe(403);
    expect((await json(res)).error.code).toBe('credential_expired');

    // Revoked, it stays in the view by its name, to be set again.
    expect((await setState(sub.id, buyer1.address, 'revoked')).status).toBe(200);
    expect((await rows()).find((b) => b.wallet === buyer1.address)).toMatchObject({
      name: 'buyer1',
      credential: null,
    });
  });

  it('lists holders granted outside the view (the CLI) without a name', async () => {
    const outsider = generateKeypair().address;
    await studio.services.credentials.grant(sub.id, outsider);
    const { data } = await json(await call(`/studio/listings/${sub.id}/buyers`));
    expect(data.find((b: { wallet: string }) => b.wallet === outsider)).toMatchObject({
      name: null,
      credential: { status: 'active', accessModel: 'subscription' },
    });
  });
});
