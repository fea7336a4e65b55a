import { readFileSync } from 'node:fs';
import { BN, BorshCoder, type Idl } from '@coral-xyz/anchor';
import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  decodeCredentialAccount,
  decodeInstructionData,
  decodeListingAccount,
  encodeCredentialAccount,
  encodeInstructionData,
  encodeListingAccount,
} from '../../../../src/core/marketplace/solana';

/**
 * Anchor's own TypeScript coder (a dev dependency) reads the shipped IDL: the bytes our hand-written
 * codec produces must be the bytes Anchor produces, both ways. This is what makes the IDL usable
 * by any Anchor client and the accounts readable by explorers.
 */
const idl = JSON.parse(
  readFileSync(new URL('../../../../resources/idl/kb_marketplace.json', import.meta.url), 'utf8'),
) as Idl;
const anchor = new BorshCoder(idl);
const creator = Keypair.generate().publicKey;
const holder = Keypair.generate().publicKey;

describe('agreement with Anchor’s BorshCoder', () => {
  it('encodes every instruction to the same bytes', () => {
    const pairs: [string, Record<string, unknown>, Record<string, unknown>][] = [
      [
        'create_listing',
        {
          listing_id: 'lst_4fQx9KpZ2mTa7bWc',
          access_model: 'Subscription',
          price_lamports: 250_000_000n,
          subscription_days: 30,
        },
        {
          listing_id: 'lst_4fQx9KpZ2mTa7bWc',
          access_model: { Subscription: {} },
          price_lamports: new BN(250_000_000),
          subscription_days: 30,
        },
      ],
      [
        'purchase_access',
        { periods: 0, deposit_lamports: 18_446_744_073_709_551_615n },
        { periods: 0, deposit_lamports: new BN('18446744073709551615') },
      ],
      ['verify_access', {}, {}],
      ['revoke_access', {}, {}],
      ['withdraw_earnings', { amount_lamports: 7n }, { amount_lamports: new BN(7) }],
    ];
    for (const [name, ours, theirs] of pairs) {
      const bytes = encodeInstructionData(name, ours as any);
      expect(bytes.toString('hex'), name).toBe(anchor.instruction.encode(name, theirs).toString('hex'));
      expect(anchor.instruction.decode(bytes)?.name).toBe(name);
      expect(decodeInstructionData(anchor.instruction.encode(name, theirs)).name).toBe(name);
    }
  });

  it('decodes the Listing our codec writes, and reads the one Anchor writes', async () => {
    const ours = encodeListingAccount({
      creator: creator.toBase58(),
      listingId: 'lst_4fQx9KpZ2mTa7bWc',
      accessModel: 'per_query',
      priceLamports: 1_000_000n,
      subscriptionDays: 0,
      earnedLamports: 9_000_000_000n,
      withdrawnLamports: 2_000_000_000n,
      bump: 253,
    });
    const decoded = anchor.accounts.decode('Listing', ours);
    expect(decoded.creator.toBase58()).toBe(creator.toBase58());
    expect(decoded.listing_id).toBe('lst_4fQx9KpZ2mTa7bWc');
    expect(decoded.access_model).toEqual({ PerQuery: {} });
    expect(decoded.earned_lamports.toString()).toBe('9000000000');
    expect(decoded.bump).toBe(253);

    const theirs = await anchor.accounts.encode('Listing', {
      creator,
      listing_id: 'lst_B',
      access_model: { OneTime: {} },
      price_lamports: new BN(5),
      subscription_days: 0,
      earned_lamports: new BN(10),
      withdrawn_lamports: new BN(0),
      bump: 250,
    });
    expect(decodeListingAccount(theirs)).toMatchObject({
      listingId: 'lst_B',
      accessModel: 'one_time',
      earnedLamports: 10n,
    });
  });

  it('agrees on AccessCredential both ways', async () => {
    const listing = new PublicKey(Keypair.generate().publicKey.toBytes());
    const ours = encodeCredentialAccount({
      listing: listing.toBase58(),
      holder: holder.toBase58(),
      accessModel: 'subscription',
      expiresAt: 1_769_904_000,
      balanceLamports: 0n,
      createdAt: 1_767_225_600,
      bump: 255,
    });
    const decoded = anchor.accounts.decode('AccessCredential', ours);
    expect(decoded.holder.toBase58()).toBe(holder.toBase58());
    expect(decoded.access_model).toEqual({ Subscription: {} });
    expect(decoded.expires_at.toString()).toBe('1769904000');
    const theirs = await anchor.accounts.encode('AccessCredential', {
      listing,
      holder,
      access_model: { PerQuery: {} },
      expires_at: new BN(0),
      balance_lamports: new BN(123),
      created_at: new BN(1_767_225_600),
      bump: 1,
    });
    expect(decodeCredentialAccount(theirs)).toEqual({
      listing: listing.toBase58(),
      holder: holder.toBase58(),
      accessModel: 'per_query',
      expiresAt: 0,
      balanceLamports: 123n,
      createdAt: 1_767_225_600,
      bump: 1,
    });
  });
});
