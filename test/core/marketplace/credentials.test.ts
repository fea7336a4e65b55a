import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { credentialStatus, DEFAULT_TEST_QUERIES } from '../../../src/core/marketplace/credentials';
import { SqliteLedgerRepository } from '../../../src/db/repositories/ledger';
import { DAY_MS, marketplaceFixture, type MarketplaceFixture } from './fixture';

let f: MarketplaceFixture;
beforeEach(() => {
  f = marketplaceFixture();
});
afterEach(() => f.close());

const page = { limit: 20, offset: 0 };

describe('credential status', () => {
  const now = new Date('2030-06-01T00:00:00Z');
  it('follows DESIGN §3 for each access model', () => {
    expect(credentialStatus({ accessModel: 'one_time', expiresAt: null, balanceLamports: 0 }, 5, now)).toBe(
      'active',
    );
    const sub = (expiresAt: string | null) =>
      credentialStatus({ accessModel: 'subscription', expiresAt, balanceLamports: 0 }, 5, now);
    expect(sub('2030-06-01T00:00:00.001Z')).toBe('active');
    expect(sub('2030-06-01T00:00:00.000Z')).toBe('expired');
    expect(sub(null)).toBe('expired');
    const perQuery = (balance: number) =>
      credentialStatus({ accessModel: 'per_query', expiresAt: null, balanceLamports: balance }, 5, now);
    expect(perQuery(5)).toBe('active');
    expect(perQuery(4)).toBe('low_balance');
    expect(perQuery(0)).toBe('low_balance');
  });
});

describe('CredentialService', () => {
  it('one_time: not_found → active (purchase) → not_found (revoked)', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 1 });
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toEqual({
      listingId: listing.id,
      valid: false,
      status: 'not_found',
      onChainVerified: false,
    });
    await f.services.credentials.purchase(listing.id, f.buyer);
    const active = await f.services.credentials.verify(listing.id, f.buyer);
    expect(active).toEqual({
      listingId: listing.id,
      valid: true,
      status: 'active',
      pdaAddress: expect.any(String),
      onChainVerified: false,
    });
    f.clock.advanceDays(10_000);
    expect((await f.services.credentials.verify(listing.id, f.buyer)).status).toBe('active');
    await f.services.credentials.revoke(listing.id, f.buyer);
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toMatchObject({
      valid: false,
      status: 'not_found',
    });
    expect(f.services.credentials.list(f.buyer, page).items).toEqual([]);
  });

  it('subscription: active until expiresAt, then expired as the clock crosses it; renewal reactivates', async () => {
    const listing = await f.listing({ accessModel: 'subscription', price: 0.2, subscriptionDays: 30 });
    const start = f.clock.now.getTime();
    await f.services.credentials.purchase(listing.id, f.buyer);
    const expiresAt = new Date(start + 30 * DAY_MS).toISOString();
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toEqual({
      listingId: listing.id,
      valid: true,
      status: 'active',
      expiresAt,
      pdaAddress: expect.any(String),
      onChainVerified: false,
    });
    f.clock.set(new Date(start + 30 * DAY_MS - 1).toISOString());
    expect((await f.services.credentials.verify(listing.id, f.buyer)).status).toBe('active');
    f.clock.set(expiresAt);
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toMatchObject({
      valid: false,
      status: 'expired',
      expiresAt,
    });
    await f.services.credentials.purchase(listing.id, f.buyer, { periods: 1 });
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toMatchObject({
      valid: true,
      status: 'active',
      expiresAt: new Date(Date.parse(expiresAt) + 30 * DAY_MS).toISOString(),
    });
  });

  it('per_query: active while the balance pays one query, low_balance below, active again after a top-up', async () => {
    const listing = await f.listing({ accessModel: 'per_query', price: 0.01 });
    const { credential, paid } = await f.services.credentials.purchase(listing.id, f.buyer, {
      deposit: 0.015,
    });
    expect(paid).toBe(0.015);
    expect(credential).toMatchObject({ status: 'active', balance: 0.015, expiresAt: null });
    // One query's debit, as retrieval applies it.
    f.services.db
      .prepare(
        `UPDATE credentials SET balance_lamports = balance_lamports - 10000000 WHERE holder_wallet = ?`,
      )
      .run(f.buyer);
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toMatchObject({
      valid: false,
      status: 'low_balance',
    });
    // A top-up covers at least one query, as the program requires of every deposit (InvalidDeposit).
    await expect(f.services.credentials.purchase(listing.id, f.buyer, { deposit: 0.005 })).rejects.toThrow(
      /^deposit: 0\.005 SOL is less than one query/,
    );
    await f.services.credentials.purchase(listing.id, f.buyer, { deposit: 0.01 });
    expect(await f.services.credentials.verify(listing.id, f.buyer)).toMatchObject({
      valid: true,
      status: 'active',
    });
  });

  it("keeps a published listing's terms while anyone holds access: a per-query balance is never debited another price", async () => {
    const listing = await f.listing({ accessModel: 'per_query', price: 0.001 });
    const listings = f.services.listings;
    await f.services.credentials.purchase(listing.id, f.buyer, { deposit: 0.01 });
    const change = () =>
      listings.update(listing.id, { accessModel: 'subscription', price: 0.004, subscriptionDays: 30 });
    expect(change).toThrow(
      /accessModel, price, subscriptionDays: .* 1 credential held under its current terms \(per_query, 0.001 SOL per query\)/,
    );
    expect(() => listings.update(listing.id, { price: 0.002 })).toThrow(/^price: /);
    expect(listings.get(listing.id, 'studio')).toMatchObject({ accessModel: 'per_query', price: 0.001 });
    expect(
      f.services.credentials.heldAccess(listings.get(listing.id, 'studio'), f.buyer)?.priceLamports,
    ).toBe(1_000_000);
    // What is not a term still changes, and the same terms sent again are no change.
    expect(
      listings.update(listing.id, { title: 'Renamed', accessModel: 'per_query', price: 0.001 }),
    ).toMatchObject({
      title: 'Renamed',
    });
    // With nobody holding access, the terms are the creator's to change again.
    await f.services.credentials.revoke(listing.id, f.buyer);
    expect(change()).toMatchObject({ accessModel: 'subscription', price: 0.004, subscriptionDays: 30 });
  });

  it('grants test buyers in every state, signed by the creator, free of charge', async () => {
    const sub = await f.listing({ accessModel: 'subscription', price: 1, subscriptionDays: 7 });
    const perQuery = await f.listing({ accessModel: 'per_query', price: 0.002 });
    const once = await f.listing({ accessModel: 'one_time', price: 3 });

    const expired = await f.services.credentials.grant(sub.id, f.outsider, {
      expiresAt: '2029-12-31T00:00:00Z',
    });
    expect(expired).toMatchObject({
      status: 'expired',
      expiresAt: '2029-12-31T00:00:00.000Z',
      testGrant: true,
    });
    const renewed = await f.services.credentials.grant(sub.id, f.outsider);
    expect(renewed).toMatchObject({
      status: 'active',
      expiresAt: new Date(f.clock.now.getTime() + 7 * DAY_MS).toISOString(),
    });

    const low = await f.services.credentials.grant(perQuery.id, f.outsider, { balance: 0.001 });
    expect(low).toMatchObject({ status: 'low_balance', balance: 0.001 });
    const standard = await f.services.credentials.grant(perQuery.id, f.buyer);
    expect(standard).toMatchObject({ status: 'active', balance: 0.002 * DEFAULT_TEST_QUERIES });

    expect(await f.services.credentials.grant(once.id, f.outsider)).toMatchObject({
      status: 'active',
      testGrant: true,
    });
    await expect(
      f.services.credentials.grant(once.id, f.outsider, { expiresAt: '2031-01-01T00:00:00Z' }),
    ).rejects.toThrow(/^expiresAt: does not apply to a one_time credential/);
    await expect(f.services.credentials.grant(sub.id, f.outsider, { balance: 1 })).rejects.toThrow(
      /^balance: /,
    );
    await expect(f.services.credentials.grant(sub.id, f.creator)).rejects.toThrow(/can always query it/);
    await expect(f.services.credentials.grant(sub.id, 'not-a-wallet')).rejects.toThrow(/^wallet: /);

    const grants = new SqliteLedgerRepository(f.services.db)
      .entries()
      .filter((e) => e.instruction === 'purchase_access');
    expect(grants).toHaveLength(5);
    expect(grants.every((e) => e.wallet === f.creator && e.amountLamports === 0)).toBe(true);
    for (const listing of [sub, perQuery, once]) {
      expect((await f.services.ledger.earnings(listing.id)).earnedLamports).toBe(0);
    }
  });

  it("takes only real ISO 8601 dates for a test buyer's expiresAt", async () => {
    const sub = await f.listing({ accessModel: 'subscription', price: 1, subscriptionDays: 7 });
    // Only real ISO 8601 dates: Date.parse alone took each of these for some day or other.
    for (const expiresAt of ['2027-02-30T00:00:00Z', '2027-02-31', '1', '12/31/2027']) {
      await expect(f.services.credentials.grant(sub.id, f.outsider, { expiresAt })).rejects.toMatchObject({
        code: 'invalid_request',
        message: `expiresAt: '${expiresAt}' is not an ISO 8601 date: give YYYY-MM-DD, or a date and time with its offset (2027-01-31T12:00:00Z).`,
      });
    }
    // ISO 8601 too, but without an offset it names no instant: the message says what is missing.
    await expect(
      f.services.credentials.grant(sub.id, f.outsider, { expiresAt: '2027-01-01T00:00:00' }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message:
        "expiresAt: '2027-01-01T00:00:00' has no offset, so it names no instant: add Z for UTC or the offset (2027-01-01T00:00:00Z, 2027-01-01T00:00:00+02:00), or give YYYY-MM-DD.",
    });
    for (const [expiresAt, stored] of [
      ['2029-12-31', '2029-12-31T00:00:00.000Z'],
      ['2029-12-31T02:30:00+02:00', '2029-12-31T00:30:00.000Z'],
    ]) {
      expect(await f.services.credentials.grant(sub.id, f.outsider, { expiresAt })).toMatchObject({
        expiresAt: stored,
      });
    }
  });

  it('refuses amounts a balance cannot hold exactly, naming the field, and charges nothing', async () => {
    const listing = await f.listing({ accessModel: 'per_query', price: 0.01 });
    // 1e300 failed signing the instruction (a 500); 1e7 SOL was called "not above 0 SOL".
    for (const amount of [1e300, 1e7, 1_000_000.5]) {
      await expect(
        f.services.credentials.purchase(listing.id, f.buyer, { deposit: amount }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'deposit: at most 1,000,000 SOL at a time.',
      });
      await expect(
        f.services.credentials.grant(listing.id, f.outsider, { balance: amount }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'balance: at most 1,000,000 SOL at a time.',
      });
    }
    // Below a lamport, or a fraction of one: not silently rounded (a grant of 1e-10 SOL stored 0).
    for (const amount of [0.0000000001, 0.0100000005]) {
      await expect(
        f.services.credentials.purchase(listing.id, f.buyer, { deposit: amount }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'deposit: Use at most 9 decimals: 1 lamport is 0.000000001 SOL.',
      });
      await expect(
        f.services.credentials.grant(listing.id, f.outsider, { balance: amount }),
      ).rejects.toMatchObject({
        code: 'invalid_request',
        message: 'balance: Use at most 9 decimals: 1 lamport is 0.000000001 SOL.',
      });
    }
    expect(f.services.credentials.listAll(listing.id)).toEqual([]);
    const { credential } = await f.services.credentials.purchase(listing.id, f.buyer, { deposit: 1_000_000 });
    expect(credential.balance).toBe(1_000_000);
  });

  it("refuses the creator's own purchase: it can always query its listing, and would pay itself", async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 1.5 });
    await expect(f.services.credentials.purchase(listing.id, f.creator)).rejects.toMatchObject({
      code: 'invalid_request',
      message: `wallet: ${f.creator} created listing '${listing.id}' and can always query it; buy as another wallet.`,
    });
    expect(f.services.credentials.listAll(listing.id)).toEqual([]);
    expect(await f.services.publishing.earnings(listing.id)).toMatchObject({ earned: 0 });
  });

  it('keeps test grants and purchases apart', async () => {
    const listing = await f.listing({ accessModel: 'per_query', price: 0.001 });
    await f.services.credentials.purchase(listing.id, f.buyer, { deposit: 0.01 });
    await expect(f.services.credentials.grant(listing.id, f.buyer, { balance: 5 })).rejects.toThrow(
      /would overwrite a paid credential/,
    );
    await f.services.credentials.revoke(listing.id, f.buyer);
    await f.services.credentials.grant(listing.id, f.buyer, { balance: 5 });
    await expect(f.services.credentials.purchase(listing.id, f.buyer, { deposit: 1 })).rejects.toThrow(
      /holds a test grant/,
    );
  });

  it("lists the holder's credentials newest first, filtered by status and paginated", async () => {
    const a = await f.listing({ accessModel: 'one_time', price: 1, title: 'Alpha' });
    const b = await f.listing({ accessModel: 'subscription', price: 1, subscriptionDays: 1, title: 'Beta' });
    const c = await f.listing({ accessModel: 'per_query', price: 1, title: 'Gamma' });
    await f.services.credentials.grant(a.id, f.buyer);
    f.clock.advanceDays(1 / 24);
    await f.services.credentials.grant(b.id, f.buyer, { expiresAt: '2020-01-01T00:00:00Z' });
    f.clock.advanceDays(1 / 24);
    await f.services.credentials.grant(c.id, f.buyer, { balance: 0.5 });
    f.clock.advanceDays(1 / 24);
    const d = await f.listing({ accessModel: 'one_time', price: 1, title: 'Delta' });
    await f.services.credentials.grant(d.id, f.buyer);
    await f.services.credentials.grant(a.id, f.outsider);

    // Spec §4: the active ones unless another status is asked for.
    const active = f.services.credentials.list(f.buyer, page);
    expect(active.total).toBe(2);
    expect(active.items.map((i) => [i.listingTitle, i.status])).toEqual([
      ['Delta', 'active'],
      ['Alpha', 'active'],
    ]);
    const lowBalance = f.services.credentials.list(f.buyer, { ...page, status: 'low_balance' });
    expect(lowBalance.items.map((i) => i.listingTitle)).toEqual(['Gamma']);
    expect(lowBalance.items[0]).toEqual({
      listingId: c.id,
      listingTitle: 'Gamma',
      holderWallet: f.buyer,
      accessModel: 'per_query',
      status: 'low_balance',
      expiresAt: null,
      balance: 0.5,
      pdaAddress: expect.any(String),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(
      f.services.credentials.list(f.buyer, { ...page, status: 'expired' }).items.map((i) => i.listingId),
    ).toEqual([b.id]);
    const second = f.services.credentials.list(f.buyer, { limit: 1, offset: 1 });
    expect(second).toMatchObject({ total: 2, limit: 1, offset: 1 });
    expect(second.items.map((i) => i.listingTitle)).toEqual(['Alpha']);
    expect(
      f.services.credentials
        .listAll(a.id)
        .map((i) => i.holderWallet)
        .sort(),
    ).toEqual([f.buyer, f.outsider].sort());
  });

  it('answers 404 for an unknown listing and for another wallet’s draft', async () => {
    await expect(f.services.credentials.verify('lst_missing', f.buyer)).rejects.toMatchObject({
      code: 'listing_not_found',
    });
    const draft = f.services.listings.create({ title: 'D', accessModel: 'one_time', price: 1 }, f.creator);
    await expect(f.services.credentials.verify(draft.id, f.buyer)).rejects.toMatchObject({
      code: 'listing_not_found',
    });
    await expect(f.services.credentials.grant(draft.id, f.buyer)).rejects.toThrow(/is a draft/);
  });
});
