import { Keypair, Transaction } from '@solana/web3.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  prepareListingTransaction,
  submitListingTransaction,
} from '../../../src/core/marketplace/walletSignedListing';
import { openServices, type StudioServices } from '../../../src/db/services';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../helpers/fakeSolanaRpc';
import { SOL, openStudioOnFakeChain, type StudioOnFakeChain } from '../../helpers/studioOnFakeChain';

/**
 * Publishing and withdrawing on Solana as the chain in use has it: a listing the studio recorded on
 * another cluster is created again, one already there is never recorded twice, requests for one
 * listing at once get the idempotent answers, and a listing holding embedded-ledger money stays off
 * chain until that money is settled.
 */
let studio: StudioOnFakeChain;
let rpc: FakeSolanaRpc;
let services: StudioServices;
let creator: string;

beforeEach(async () => {
  studio = await openStudioOnFakeChain('kbs-publishing-');
  ({ rpc, services, creator } = studio);
});
afterEach(() => studio.close());

const useEmbeddedLedger = () => studio.useEmbeddedLedger();
const entries = (listingId: string, instruction: string) =>
  services.db
    .prepare(`SELECT ledger FROM ledger_entries WHERE listing_id = ? AND instruction = ?`)
    .all(listingId, instruction) as { ledger: string }[];
const draft = (price = 0.25, accessModel: 'one_time' | 'per_query' = 'one_time') =>
  services.listings.create({ title: 'KB', accessModel, price }, creator);
const buyer = (name: string, on: FakeSolanaRpc | null = rpc) => {
  const address = services.wallets.create(name).address;
  on?.fund(address, 2 * SOL);
  return address;
};

describe('publishing again on another cluster', () => {
  it('creates the listing where the studio’s records name an account the chain in use lacks', async () => {
    const listing = await services.publishing.publish(draft().id);
    const other = await startFakeSolanaRpc({ confirmAfterPolls: 0 });
    try {
      other.fund(creator, 10 * SOL);
      services.settings.set('solana.rpcUrl', other.url);
      expect(other.account(listing.pdaAddress!)).toBeUndefined();

      const again = await services.publishing.publishOnce(listing.id);
      expect(again.alreadyPublished).toBe(false);
      expect(other.account(listing.pdaAddress!)?.owner).toBe(other.programId);
      expect(entries(listing.id, 'create_listing')).toEqual([{ ledger: 'solana' }, { ledger: 'solana' }]);
      // It can be sold there now, and publishing once more sends nothing.
      const alice = buyer('alice', other);
      expect((await services.credentials.purchase(listing.id, alice)).paid).toBe(0.25);
      const sent = other.calls('sendTransaction').length;
      expect((await services.publishing.publishOnce(listing.id)).alreadyPublished).toBe(true);
      expect(other.calls('sendTransaction')).toHaveLength(sent);
    } finally {
      useEmbeddedLedger();
      await other.close();
    }
  });
});

describe('create_listing signed through a wallet adapter', () => {
  async function signed(listingId: string): Promise<Uint8Array> {
    const deps = { listings: services.listings, ledger: services.ledger };
    const prepared = await prepareListingTransaction(deps, listingId, rpc.programId);
    const tx = Transaction.from(Buffer.from(prepared.transaction, 'base64'));
    tx.partialSign(Keypair.fromSecretKey(services.wallets.secretKeyOf(creator)));
    return tx.serialize();
  }
  const submit = async (listingId: string) =>
    submitListingTransaction(
      { listings: services.listings, ledger: services.ledger },
      listingId,
      rpc.programId,
      await signed(listingId),
    );

  it('records nothing for a listing already on chain that the studio recorded there', async () => {
    const listing = await services.publishing.publish(draft().id);
    const sent = rpc.calls('sendTransaction').length;
    const again = await submit(listing.id);
    expect(again.pdaAddress).toBe(listing.pdaAddress);
    expect(rpc.calls('sendTransaction')).toHaveLength(sent);
    expect(entries(listing.id, 'create_listing')).toHaveLength(1);
  });

  it('publishes a listing another client put on chain with the same terms meanwhile, recording nothing', async () => {
    const { id } = draft(0.25);
    const bytes = await signed(id);
    rpc.beforeAnswer = (method) => {
      if (method !== 'sendTransaction') return;
      rpc.beforeAnswer = undefined;
      rpc.seedListing({ creator, listingId: id, accessModel: 'one_time', priceLamports: BigInt(SOL / 4) });
    };
    const deps = { listings: services.listings, ledger: services.ledger };
    const result = await submitListingTransaction(deps, id, rpc.programId, bytes);
    expect(result.listing).toMatchObject({ status: 'published', pdaAddress: result.pdaAddress });
    // Its transaction never landed: the client whose transaction created the account records it.
    expect(rpc.transactions.has(result.signature)).toBe(false);
    expect(entries(id, 'create_listing')).toEqual([]);
  });

  it('is refused while the listing holds embedded-ledger purchases, sending nothing', async () => {
    useEmbeddedLedger();
    const listing = await services.publishing.publish(draft().id);
    await services.credentials.purchase(listing.id, buyer('alice', null));
    services.settings.set('solana.rpcUrl', rpc.url);
    const sent = rpc.calls('sendTransaction').length;
    await expect(submit(listing.id)).rejects.toMatchObject({ code: 'conflict' });
    expect(rpc.calls('sendTransaction')).toHaveLength(sent);
  });
});

describe('requests for one listing at once', () => {
  it('publishes once; the others are told it is already published', async () => {
    const { id } = draft();
    const sent = rpc.calls('sendTransaction').length;
    const results = await Promise.all([1, 2, 3].map(() => services.publishing.publishOnce(id)));
    expect(results.map((r) => r.alreadyPublished).sort()).toEqual([false, true, true]);
    expect(rpc.calls('sendTransaction')).toHaveLength(sent + 1);
    expect(entries(id, 'create_listing')).toHaveLength(1);
  });

  it('from two processes on one data directory: one sends, the other is told it is already published', async () => {
    // Another process (a CLI command beside the studio) holds services of its own, and its own queue.
    const other = openServices(studio.dataDir);
    try {
      const { id } = draft();
      const sent = rpc.calls('sendTransaction').length;
      const results = await Promise.all([
        services.publishing.publishOnce(id),
        other.publishing.publishOnce(id),
      ]);
      // Both read "not on chain" before either sent: the program refused the second creation.
      expect(rpc.calls('sendTransaction')).toHaveLength(sent + 2);
      expect(results.map((r) => r.alreadyPublished).sort()).toEqual([false, true]);
      for (const { listing } of results) {
        expect(listing).toMatchObject({ status: 'published', pdaAddress: expect.any(String) });
      }
      // Recorded once, by the process whose transaction created the account.
      expect(entries(id, 'create_listing')).toEqual([{ ledger: 'solana' }]);
      expect(await services.ledger.published(id)).toBe(true);
    } finally {
      other.close();
    }
  });

  it('refuses, naming the terms on chain, a listing another client created with other terms meanwhile', async () => {
    const { id } = draft(0.25);
    // Between the studio's read of the chain and its send, another client's create_listing lands.
    rpc.beforeAnswer = (method) => {
      if (method !== 'sendTransaction') return;
      rpc.beforeAnswer = undefined;
      rpc.seedListing({ creator, listingId: id, accessModel: 'one_time', priceLamports: BigInt(SOL) });
    };
    await expect(services.publishing.publishOnce(id)).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(
        /already on chain at \w+ with other terms \(one_time, 1000000000 lamports\)/,
      ),
    });
    expect(services.listings.get(id, 'studio').status).toBe('draft');
    expect(entries(id, 'create_listing')).toEqual([]);
  });

  it('pays out once; the others find nothing to withdraw', async () => {
    const listing = await services.publishing.publish(draft().id);
    await services.credentials.purchase(listing.id, buyer('alice'));
    const results = await Promise.all([1, 2, 3].map(() => services.publishing.withdraw(listing.id)));
    expect(results.map((r) => r.amount).sort()).toEqual([0, 0, 0.25]);
    expect(results.filter((r) => r.signature === null)).toHaveLength(2);
    expect(entries(listing.id, 'withdraw_earnings')).toHaveLength(1);
  });
});

describe('a listing sold on the embedded ledger, published on Solana', () => {
  it('is refused while it holds purchased credentials or earnings there, naming both; test grants stay', async () => {
    useEmbeddedLedger();
    const listing = await services.publishing.publish(draft().id);
    const alice = buyer('alice', null);
    const bob = buyer('bob', null);
    await services.credentials.purchase(listing.id, alice);
    await services.credentials.grant(listing.id, bob);
    services.settings.set('solana.rpcUrl', rpc.url);

    const publish = () => services.publishing.publishOnce(listing.id);
    await expect(publish()).rejects.toMatchObject({ code: 'conflict' });
    await expect(publish()).rejects.toThrow(
      /holds 1 credential bought on the embedded ledger and 0\.25 SOL of embedded earnings to withdraw; .*withdraw the earnings .*revoke those credentials .*revoking refunds a per-query balance/,
    );
    expect(rpc.account(listing.pdaAddress!)).toBeUndefined();

    useEmbeddedLedger();
    await services.credentials.revoke(listing.id, alice);
    services.settings.set('solana.rpcUrl', rpc.url);
    await expect(publish()).rejects.toThrow(
      /holds 0 credentials bought .* and 0\.25 SOL of embedded earnings/,
    );

    useEmbeddedLedger();
    expect(await services.publishing.withdraw(listing.id)).toMatchObject({ amount: 0.25 });
    services.settings.set('solana.rpcUrl', rpc.url);
    expect((await publish()).alreadyPublished).toBe(false);
    expect(rpc.account(listing.pdaAddress!)?.owner).toBe(rpc.programId);
    expect(services.credentials.listAll(listing.id).map((c) => [c.holderWallet, c.testGrant])).toEqual([
      [bob, true],
    ]);
  });

  it('is refused for a per-query deposit not yet spent, until it is revoked (and refunded)', async () => {
    useEmbeddedLedger();
    const listing = await services.publishing.publish(draft(0.01, 'per_query').id);
    const alice = buyer('alice', null);
    await services.credentials.purchase(listing.id, alice, { deposit: 0.05 });
    services.settings.set('solana.rpcUrl', rpc.url);
    await expect(services.publishing.publishOnce(listing.id)).rejects.toThrow(
      /holds 1 credential bought on the embedded ledger and 0 SOL of embedded earnings/,
    );
    useEmbeddedLedger();
    expect((await services.credentials.revoke(listing.id, alice)).refunded).toBe(0.05);
    services.settings.set('solana.rpcUrl', rpc.url);
    expect((await services.publishing.publishOnce(listing.id)).alreadyPublished).toBe(false);
  });
});
