import { Keypair, SystemProgram, type TransactionInstruction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  createListingInstruction,
  credentialPda,
  decodeInstructionData,
  listingPda,
  purchaseAccessInstruction,
  revokeAccessInstruction,
  verifyAccessInstruction,
  withdrawEarningsInstruction,
} from '../../../../src/core/marketplace/solana';

const programId = Keypair.generate().publicKey;
const creator = Keypair.generate().publicKey;
const holder = Keypair.generate().publicKey;
const [listing] = listingPda(programId, creator, 'lst_4fQx9KpZ2mTa7bWc');
const [credential] = credentialPda(programId, listing, holder);

/** Each meta as "address flags" so a wrong order, key or flag shows in the diff. */
const metas = (ix: TransactionInstruction) =>
  ix.keys.map((k) => `${k.pubkey.toBase58()} ${k.isSigner ? 's' : '-'}${k.isWritable ? 'w' : '-'}`);

describe('instruction builders', () => {
  it('create_listing: creator (signer, writable), its listing PDA (writable), the System Program', () => {
    const ix = createListingInstruction(programId, {
      creator: creator.toBase58(),
      listingId: 'lst_4fQx9KpZ2mTa7bWc',
      accessModel: 'subscription',
      priceLamports: 250_000_000,
      subscriptionDays: 30,
    });
    expect(ix.programId.equals(programId)).toBe(true);
    expect(metas(ix)).toEqual([
      `${creator.toBase58()} sw`,
      `${listing.toBase58()} -w`,
      `${SystemProgram.programId.toBase58()} --`,
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({
      name: 'create_listing',
      args: {
        listing_id: 'lst_4fQx9KpZ2mTa7bWc',
        access_model: 'Subscription',
        price_lamports: 250_000_000n,
        subscription_days: 30,
      },
    });
  });

  it('create_listing defaults subscription_days to 0 and refuses an unknown access model', () => {
    const ix = createListingInstruction(programId, {
      creator,
      listingId: 'lst_a',
      accessModel: 'per_query',
      priceLamports: 1n,
    });
    expect(decodeInstructionData(ix.data).args.subscription_days).toBe(0);
    expect(() =>
      createListingInstruction(programId, {
        creator,
        listingId: 'lst_a',
        accessModel: 'forever' as any,
        priceLamports: 1n,
      }),
    ).toThrow("accessModel: 'forever' is not one_time, subscription or per_query.");
  });

  it('purchase_access: buyer pays (signer, writable) into the listing; the credential PDA is the buyer’s', () => {
    const ix = purchaseAccessInstruction(programId, {
      buyer: holder,
      listing,
      periods: 2,
      depositLamports: 0n,
    });
    expect(metas(ix)).toEqual([
      `${holder.toBase58()} sw`,
      `${listing.toBase58()} -w`,
      `${credential.toBase58()} -w`,
      `${SystemProgram.programId.toBase58()} --`,
    ]);
    expect(decodeInstructionData(ix.data).args).toEqual({ periods: 2, deposit_lamports: 0n });
  });

  it('verify_access is read-only and needs no signer', () => {
    const ix = verifyAccessInstruction(programId, { holder, listing });
    expect(metas(ix)).toEqual([
      `${holder.toBase58()} --`,
      `${listing.toBase58()} --`,
      `${credential.toBase58()} --`,
    ]);
    expect(decodeInstructionData(ix.data)).toEqual({ name: 'verify_access', args: {} });
  });

  it('revoke_access: the authority signs; the holder receives the closed credential’s rent', () => {
    const ix = revokeAccessInstruction(programId, { authority: creator, holder, listing });
    expect(metas(ix)).toEqual([
      `${creator.toBase58()} s-`,
      `${holder.toBase58()} -w`,
      `${listing.toBase58()} --`,
      `${credential.toBase58()} -w`,
    ]);
  });

  it('withdraw_earnings: the creator signs and receives from the listing', () => {
    const ix = withdrawEarningsInstruction(programId, { creator, listing, amountLamports: 10n });
    expect(metas(ix)).toEqual([`${creator.toBase58()} sw`, `${listing.toBase58()} -w`]);
    expect(decodeInstructionData(ix.data).args).toEqual({ amount_lamports: 10n });
  });

  it('names the bad argument when an address is malformed', () => {
    expect(() =>
      purchaseAccessInstruction(programId, { buyer: 'nope', listing, periods: 1, depositLamports: 0n }),
    ).toThrow("buyer: 'nope' is not a base58 Solana address.");
  });
});
