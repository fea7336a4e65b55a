import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StudioServices } from '../../../../src/db/services';
import type { FakeSolanaRpc } from '../../../helpers/fakeSolanaRpc';
import { SOL, openStudioOnFakeChain, type StudioOnFakeChain } from '../../../helpers/studioOnFakeChain';

/**
 * The Solana ledger and the embedded one over the same studio records: a listing created on chain
 * keeps its terms there, and money that moved on chain is never the embedded ledger's to pay again.
 */
let studio: StudioOnFakeChain;
let rpc: FakeSolanaRpc;
let services: StudioServices;
let creator: string;

beforeEach(async () => {
  studio = await openStudioOnFakeChain('kbs-on-chain-records-');
  ({ rpc, services, creator } = studio);
});
afterEach(() => studio.close());

const useEmbeddedLedger = () => studio.useEmbeddedLedger();
const entries = (listingId: string, instruction: string) =>
  services.db
    .prepare(`SELECT amount_lamports AS amount FROM ledger_entries WHERE listing_id = ? AND instruction = ?`)
    .all(listingId, instruction) as { amount: number }[];

async function publishedOnChain(terms: { accessModel: 'one_time' | 'subscription'; price: number }) {
  const draft = services.listings.create(
    {
      title: 'Sub KB',
      ...terms,
      subscriptionDays: terms.accessModel === 'subscription' ? 30 : undefined,
    },
    creator,
  );
  return services.publishing.publish(draft.id);
}

describe('terms of a listing created on chain', () => {
  it('refuses a change of access model, price or days while nobody holds a credential, on any network', async () => {
    const listing = await publishedOnChain({ accessModel: 'subscription', price: 1.5 });
    expect(services.credentials.listAll(listing.id)).toHaveLength(0);

    const change = () => services.listings.update(listing.id, { price: 0.5 }, 'studio');
    expect(change).toThrow(
      /price: listing 'lst_\w+' is on chain at \w+ .*the program on chain cannot change terms/,
    );
    expect(() => services.listings.update(listing.id, { subscriptionDays: 7 })).toThrow(
      /^subscriptionDays: /,
    );
    expect(() => services.listings.update(listing.id, { accessModel: 'one_time', price: 2 })).toThrow(
      /^accessModel, price, subscriptionDays: .*cannot change terms/,
    );
    try {
      change();
    } catch (err) {
      expect((err as { code: string }).code).toBe('conflict');
    }
    // Still on chain when the studio has switched to the embedded ledger.
    useEmbeddedLedger();
    expect(change).toThrow(/cannot change terms/);
    // Everything but the terms still changes.
    expect(services.listings.update(listing.id, { title: 'Renamed' }).title).toBe('Renamed');
    expect(services.listings.get(listing.id, 'studio').price).toBe(1.5);
  });

  it('leaves the terms of a listing published on the embedded ledger free while nobody holds access', async () => {
    useEmbeddedLedger();
    const draft = services.listings.create({ title: 'Local', accessModel: 'one_time', price: 1 }, creator);
    await services.publishing.publish(draft.id);
    expect(services.listings.update(draft.id, { price: 0.5 }).price).toBe(0.5);
  });

  it('refuses a purchase whose agreed terms differ from the listing account on chain, sending nothing', async () => {
    const listing = await publishedOnChain({ accessModel: 'subscription', price: 1.5 });
    // The local listing changed behind the service's back (an older studio allowed it).
    services.db.prepare(`UPDATE listings SET price_lamports = ? WHERE id = ?`).run(0.5 * SOL, listing.id);
    const alice = services.wallets.create('alice').address;
    rpc.fund(alice, 2 * SOL);
    const sentBefore = rpc.calls('sendTransaction').length;

    const purchase = services.credentials.purchase(listing.id, alice);
    await expect(purchase).rejects.toMatchObject({ code: 'conflict' });
    await expect(purchase).rejects.toThrow(
      /on chain at \w+ with the terms subscription, 1\.5 SOL \(1500000000 lamports\) per 30 days, but the buyer agreed to subscription, 0\.5 SOL \(500000000 lamports\) per 30 days/,
    );
    expect(rpc.calls('sendTransaction')).toHaveLength(sentBefore);
    expect(rpc.account(alice)?.lamports).toBe(2n * BigInt(SOL));
    expect(services.credentials.listAll(listing.id)).toHaveLength(0);
  });
});

describe('money that moved on chain, seen from the embedded ledger', () => {
  it('records an on-chain withdrawal, so switching networks never pays it out twice', async () => {
    const listing = await publishedOnChain({ accessModel: 'one_time', price: 0.25 });
    const alice = services.wallets.create('alice').address;
    rpc.fund(alice, 2 * SOL);
    await services.credentials.purchase(listing.id, alice);
    expect(await services.publishing.withdraw(listing.id)).toMatchObject({ amount: 0.25 });

    useEmbeddedLedger();
    expect(services.ledger.kind).toBe('local');
    expect(await services.publishing.earnings(listing.id)).toEqual({
      listingId: listing.id,
      earned: 0.25,
      withdrawn: 0.25,
      withdrawable: 0,
    });
    expect(await services.publishing.withdraw(listing.id)).toEqual({
      listingId: listing.id,
      amount: 0,
      signature: null,
    });
    expect(entries(listing.id, 'withdraw_earnings')).toEqual([{ amount: 250_000_000 }]);
  });

  it('never counts on-chain payments in a wallet’s embedded balance', async () => {
    const listing = await publishedOnChain({ accessModel: 'subscription', price: 0.5 });
    const alice = services.wallets.create('alice').address;
    rpc.fund(alice, 2 * SOL);
    await services.credentials.purchase(listing.id, alice, { periods: 2 });
    await services.publishing.withdraw(listing.id);

    useEmbeddedLedger();
    expect(services.ledger.walletFlows(alice)).toEqual({ paidLamports: 0, receivedLamports: 0 });
    expect(services.ledger.walletFlows(creator)).toEqual({ paidLamports: 0, receivedLamports: 0 });
  });

  it('refuses to sell, refund or pay out an on-chain listing on the embedded ledger; test grants stay', async () => {
    const listing = await publishedOnChain({ accessModel: 'one_time', price: 0.25 });
    const alice = services.wallets.create('alice').address;
    rpc.fund(alice, 2 * SOL);
    await services.credentials.purchase(listing.id, alice);

    useEmbeddedLedger();
    const bob = services.wallets.create('bob').address;
    await expect(services.credentials.purchase(listing.id, bob)).rejects.toThrow(
      /was created on chain at \w+; .*cannot sell access to it\. Choose that Solana network \(setting solana\.rpcUrl\)/,
    );
    await expect(services.credentials.revoke(listing.id, alice)).rejects.toThrow(/cannot revoke/);
    await expect(services.publishing.withdraw(listing.id)).rejects.toThrow(/cannot pay out its earnings/);
    expect((await services.credentials.grant(listing.id, bob)).testGrant).toBe(true);
    expect(entries(listing.id, 'withdraw_earnings')).toEqual([]);
  });
});

describe('publishing again', () => {
  it('sends and records nothing for a listing the ledger in use already created', async () => {
    const listing = await publishedOnChain({ accessModel: 'one_time', price: 0.25 });
    const sent = rpc.calls('sendTransaction').length;
    expect(await services.publishing.publishOnce(listing.id)).toEqual({ listing, alreadyPublished: true });
    expect(rpc.calls('sendTransaction')).toHaveLength(sent);
    useEmbeddedLedger();
    expect((await services.publishing.publishOnce(listing.id)).alreadyPublished).toBe(true);
    expect(entries(listing.id, 'create_listing')).toHaveLength(1);
  });

  it('puts a listing published on the embedded ledger on chain when a network is chosen', async () => {
    useEmbeddedLedger();
    const draft = services.listings.create({ title: 'Later', accessModel: 'one_time', price: 0.1 }, creator);
    await services.publishing.publish(draft.id);
    expect((await services.publishing.publishOnce(draft.id)).alreadyPublished).toBe(true);
    services.settings.set('solana.rpcUrl', rpc.url);
    const { listing, alreadyPublished } = await services.publishing.publishOnce(draft.id);
    expect(alreadyPublished).toBe(false);
    expect(rpc.account(listing.pdaAddress!)?.owner).toBe(rpc.programId);
    expect(entries(draft.id, 'create_listing')).toHaveLength(2);
  });
});
