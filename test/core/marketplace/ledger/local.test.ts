import bs58 from 'bs58';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { PurchaseAccessArgs, SignedInstruction } from '../../../../src/core/marketplace/ledger/ledger';
import { newNonce, signInstruction } from '../../../../src/core/marketplace/ledger/signing';
import { solToLamports } from '../../../../src/core/money';
import { generateKeypair, verifySignature } from '../../../../src/core/wallets/keypair';
import { DEFAULT_PROGRAM_ID } from '../../../../src/core/marketplace/solana/idl';
import { credentialPda, listingPda } from '../../../../src/core/marketplace/solana/pda';
import { SqliteLedgerRepository } from '../../../../src/db/repositories/ledger';
import { DAY_MS, marketplaceFixture, type MarketplaceFixture } from '../fixture';

let f: MarketplaceFixture;
beforeEach(() => {
  f = marketplaceFixture();
});
afterEach(() => f.close());

const key = (address: string) => f.services.wallets.secretKeyOf(address);
const entries = () => new SqliteLedgerRepository(f.services.db).entries();

function purchase(listingId: string, holder: string, extra: Partial<PurchaseAccessArgs> = {}) {
  const listing = f.services.listings.get(listingId, 'studio');
  const args: PurchaseAccessArgs = {
    listingId,
    holder,
    payer: holder,
    accessModel: listing.accessModel,
    priceLamports: solToLamports(listing.price),
    nonce: newNonce(),
    ...extra,
  };
  return signInstruction('purchase_access', args, args.payer, key(args.payer));
}

function withdrawal(listingId: string, amountLamports: number) {
  return signInstruction(
    'withdraw_earnings',
    { listingId, creator: f.creator, amountLamports, nonce: newNonce() },
    f.creator,
    key(f.creator),
  );
}

describe('create_listing', () => {
  it('is signed by the creator, records the listing PDA and an entry whose signature verifies', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 2 });
    expect(listing.status).toBe('published');
    expect(bs58.decode(listing.pdaAddress!)).toHaveLength(32);
    const [entry] = entries();
    expect(entry).toMatchObject({ instruction: 'create_listing', listingId: listing.id, wallet: f.creator });
    expect(entry!.message).toMatch(/^kbs-ledger:v1:create_listing:\{"accessModel":"one_time",/);
    expect(entry!.message).toContain(`"priceLamports":2000000000`);
    const ok = verifySignature(
      f.creator,
      new TextEncoder().encode(entry!.message),
      bs58.decode(entry!.signature),
    );
    expect(ok).toBe(true);
  });

  it('derives the listing and credential PDAs under the configured program ID', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 1 });
    expect(listing.pdaAddress).toBe(listingPda(DEFAULT_PROGRAM_ID, f.creator, listing.id)[0].toBase58());
    const { credential } = await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer));
    expect(credential.pdaAddress).toBe(
      credentialPda(DEFAULT_PROGRAM_ID, listing.pdaAddress!, f.buyer)[0].toBase58(),
    );
    const programId = generateKeypair().address;
    f.services.settings.set('solana.programId', programId);
    const other = await f.listing({ accessModel: 'one_time', price: 1 });
    expect(other.pdaAddress).toBe(listingPda(programId, f.creator, other.id)[0].toBase58());
  });

  it('refuses a signature by another wallet, and terms that differ from the listing', async () => {
    const draft = f.services.listings.create({ title: 'T', accessModel: 'one_time', price: 1 }, f.creator);
    const args = {
      listingId: draft.id,
      creator: f.creator,
      accessModel: 'one_time' as const,
      priceLamports: 1_000_000_000,
      subscriptionDays: null,
      nonce: newNonce(),
    };
    const byBuyer = signInstruction('create_listing', args, f.buyer, key(f.buyer));
    await expect(f.services.ledger.createListing(byBuyer)).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/must be signed by .* not by/),
    });
    // A creator's signature presented under the buyer's name fails the ed25519 check.
    const forged = { ...signInstruction('create_listing', args, f.creator, key(f.creator)) };
    const cheaper = { ...forged, args: { ...args, priceLamports: 1 } };
    await expect(f.services.ledger.createListing(cheaper)).rejects.toThrow(/does not verify/);
    const wrongPrice = signInstruction(
      'create_listing',
      { ...args, priceLamports: 1 },
      f.creator,
      key(f.creator),
    );
    await expect(f.services.ledger.createListing(wrongPrice)).rejects.toThrow(/differ from listing/);
    expect(entries()).toEqual([]);
  });
});

describe('purchase_access', () => {
  it('charges the one_time price once; a second purchase is refused', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 1.5 });
    const bought = await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer));
    expect(bought.amountLamports).toBe(1_500_000_000);
    expect(bought.credential).toMatchObject({
      holderWallet: f.buyer,
      accessModel: 'one_time',
      testGrant: false,
    });
    expect(bs58.decode(bought.credential.pdaAddress!)).toHaveLength(32);
    await expect(f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer))).rejects.toThrow(
      /already holds one_time access/,
    );
    expect((await f.services.ledger.earnings(listing.id)).earnedLamports).toBe(1_500_000_000);
  });

  it('extends a subscription from max(now, current expiry) by periods × subscriptionDays', async () => {
    const listing = await f.listing({ accessModel: 'subscription', price: 0.5, subscriptionDays: 30 });
    const start = f.clock.now.getTime();
    const first = await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer, { periods: 2 }));
    expect(first.amountLamports).toBe(1_000_000_000);
    expect(first.credential.expiresAt).toBe(new Date(start + 60 * DAY_MS).toISOString());
    // Renewed while active: added to the current end.
    f.clock.advanceDays(10);
    const renewed = await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer));
    expect(renewed.credential.expiresAt).toBe(new Date(start + 90 * DAY_MS).toISOString());
    // Renewed after it lapsed: counted from now.
    f.clock.advanceDays(100);
    const lapsed = await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer));
    expect(lapsed.credential.expiresAt).toBe(new Date(f.clock.now.getTime() + 30 * DAY_MS).toISOString());
    expect((await f.services.ledger.earnings(listing.id)).earnedLamports).toBe(2_000_000_000);
    await expect(
      f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer, { periods: 0 })),
    ).rejects.toThrow(/^periods: /);
  });

  it('adds per-query deposits to the balance without counting them as earnings', async () => {
    const listing = await f.listing({ accessModel: 'per_query', price: 0.001 });
    await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer, { depositLamports: 5_000_000 }));
    const topped = await f.services.ledger.purchaseAccess(
      purchase(listing.id, f.buyer, { depositLamports: 2_000_000 }),
    );
    expect(topped.credential.balanceLamports).toBe(7_000_000);
    expect((await f.services.ledger.earnings(listing.id)).earnedLamports).toBe(0);
    await expect(f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer))).rejects.toThrow(
      /^deposit: /,
    );
  });

  it('refuses terms other than the listing’s, drafts, forged and replayed instructions', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 1 });
    await expect(
      f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer, { priceLamports: 1 })),
    ).rejects.toThrow(/signed terms \(one_time, 1 lamports\) differ/);
    const signed = purchase(listing.id, f.buyer);
    const tampered: SignedInstruction<'purchase_access'> = {
      ...signed,
      args: { ...signed.args, holder: f.outsider },
    };
    await expect(f.services.ledger.purchaseAccess(tampered)).rejects.toMatchObject({ code: 'forbidden' });
    await f.services.ledger.purchaseAccess(signed);
    await f.services.ledger.revokeAccess(
      signInstruction(
        'revoke_access',
        { listingId: listing.id, holder: f.buyer, nonce: newNonce() },
        f.buyer,
        key(f.buyer),
      ),
    );
    await expect(f.services.ledger.purchaseAccess(signed)).rejects.toThrow(/already processed/);
    const draft = f.services.listings.create({ title: 'D', accessModel: 'one_time', price: 1 }, f.creator);
    await expect(f.services.ledger.purchaseAccess(purchase(draft.id, f.buyer))).rejects.toThrow(/is a draft/);
  });

  it('lets only the holder pay, or the creator grant for testing', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 1 });
    const byStranger = purchase(listing.id, f.outsider, { payer: f.buyer });
    await expect(f.services.ledger.purchaseAccess(byStranger)).rejects.toThrow(/paid by the holder/);
    const grant = await f.services.ledger.purchaseAccess(
      purchase(listing.id, f.outsider, { payer: f.creator }),
    );
    expect(grant).toMatchObject({
      amountLamports: 0,
      credential: { testGrant: true, holderWallet: f.outsider },
    });
    expect((await f.services.ledger.earnings(listing.id)).earnedLamports).toBe(0);
  });
});

describe('revoke_access', () => {
  it('removes the credential, signed by the holder or the creator, and refunds an unspent paid balance', async () => {
    const listing = await f.listing({ accessModel: 'per_query', price: 0.001 });
    await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer, { depositLamports: 3_000_000 }));
    const stranger = generateKeypair();
    const byStranger = signInstruction(
      'revoke_access',
      { listingId: listing.id, holder: f.buyer, nonce: newNonce() },
      stranger.address,
      stranger.secretKey,
    );
    await expect(f.services.ledger.revokeAccess(byStranger)).rejects.toMatchObject({ code: 'forbidden' });
    const revoked = await f.services.ledger.revokeAccess(
      signInstruction(
        'revoke_access',
        { listingId: listing.id, holder: f.buyer, nonce: newNonce() },
        f.creator,
        key(f.creator),
      ),
    );
    expect(revoked.refundedLamports).toBe(3_000_000);
    expect((await f.services.ledger.verifyAccess(listing.id, f.buyer)).credential).toBeNull();
    expect(entries().at(-1)).toMatchObject({
      instruction: 'revoke_access',
      wallet: f.creator,
      amountLamports: 3_000_000,
    });
  });
});

describe('withdraw_earnings', () => {
  it('pays out exactly the earned amount, never more, and records each withdrawal', async () => {
    const listing = await f.listing({ accessModel: 'one_time', price: 0.25 });
    const second = f.services.wallets.create('second').address;
    await f.services.ledger.purchaseAccess(purchase(listing.id, f.buyer));
    await f.services.ledger.purchaseAccess(purchase(listing.id, second));
    expect(await f.services.ledger.earnings(listing.id)).toEqual({
      listingId: listing.id,
      earnedLamports: 500_000_000,
      withdrawnLamports: 0,
      withdrawableLamports: 500_000_000,
    });
    await expect(f.services.ledger.withdrawEarnings(withdrawal(listing.id, 500_000_001))).rejects.toThrow(
      /exactly 500000000 lamports, not 500000001/,
    );
    await expect(f.services.ledger.withdrawEarnings(withdrawal(listing.id, 1))).rejects.toThrow(/exactly/);
    const paid = await f.services.ledger.withdrawEarnings(withdrawal(listing.id, 500_000_000));
    expect(paid.amountLamports).toBe(500_000_000);
    await expect(f.services.ledger.withdrawEarnings(withdrawal(listing.id, 500_000_000))).rejects.toThrow(
      /no earnings to withdraw/,
    );
    const byBuyer = signInstruction(
      'withdraw_earnings',
      { listingId: listing.id, creator: f.buyer, amountLamports: 0, nonce: newNonce() },
      f.buyer,
      key(f.buyer),
    );
    await expect(f.services.ledger.withdrawEarnings(byBuyer)).rejects.toMatchObject({ code: 'forbidden' });
    expect(entries().filter((e) => e.instruction === 'withdraw_earnings')).toEqual([
      expect.objectContaining({ listingId: listing.id, wallet: f.creator, amountLamports: 500_000_000 }),
    ]);
    // The database itself refuses a payout beyond the earnings.
    expect(() =>
      f.services.db.prepare(`UPDATE listing_earnings SET withdrawn_lamports = earned_lamports + 1`).run(),
    ).toThrow(/CHECK constraint/);
  });
});
