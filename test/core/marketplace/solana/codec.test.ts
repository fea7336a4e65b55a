import { Keypair, PublicKey } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import {
  CREDENTIAL_ACCOUNT_SPACE,
  LISTING_ACCOUNT_SPACE,
  InvalidAccountData,
  MARKETPLACE_IDL,
  decodeAccountData,
  decodeCredentialAccount,
  decodeInstructionData,
  decodeListingAccount,
  decodeTypeData,
  encodeAccountData,
  encodeCredentialAccount,
  encodeInstructionData,
  encodeListingAccount,
  encodeTypeData,
  type CredentialAccount,
  type ListingAccount,
} from '../../../../src/core/marketplace/solana';

const creator = Keypair.generate().publicKey.toBase58();
const holder = Keypair.generate().publicKey.toBase58();
const discriminatorOf = (name: string) =>
  Buffer.from(MARKETPLACE_IDL.instructions.find((i) => i.name === name)!.discriminator);

const listing: ListingAccount = {
  creator,
  listingId: 'lst_4fQx9KpZ2mTa7bWc',
  accessModel: 'subscription',
  priceLamports: 250_000_000n,
  subscriptionDays: 30,
  earnedLamports: 18_446_744_073_709_551_615n,
  withdrawnLamports: 1n,
  bump: 254,
};
const credential: CredentialAccount = {
  listing: Keypair.generate().publicKey.toBase58(),
  holder,
  accessModel: 'per_query',
  expiresAt: 0,
  balanceLamports: 5_000_000n,
  createdAt: 1_767_225_600,
  bump: 251,
};

describe('instruction data', () => {
  it('lays out purchase_access as discriminator, u32 LE periods, u64 LE deposit', () => {
    const data = encodeInstructionData('purchase_access', {
      periods: 3,
      deposit_lamports: 0x0102030405060708n,
    });
    expect(data.toString('hex')).toBe(
      discriminatorOf('purchase_access').toString('hex') + '03000000' + '0807060504030201',
    );
  });

  it('lays out create_listing: string as u32 length + UTF-8, the access model as its variant byte', () => {
    const data = encodeInstructionData('create_listing', {
      listing_id: 'lst_é',
      access_model: 'PerQuery',
      price_lamports: 1000,
      subscription_days: 0,
    });
    expect(data.subarray(8).toString('hex')).toBe(
      '06000000' + Buffer.from('lst_é').toString('hex') + '02' + 'e803000000000000' + '00000000',
    );
  });

  const cases: [string, Record<string, any>][] = [
    [
      'create_listing',
      {
        listing_id: 'lst_4fQx9KpZ2mTa7bWc',
        access_model: 'Subscription',
        price_lamports: 250_000_000n,
        subscription_days: 30,
      },
    ],
    ['purchase_access', { periods: 0, deposit_lamports: 18_446_744_073_709_551_615n }],
    ['verify_access', {}],
    ['revoke_access', {}],
    ['withdraw_earnings', { amount_lamports: 42n }],
  ];
  it.each(cases)('round-trips %s', (name, args) => {
    const data = encodeInstructionData(name, args);
    expect(data.subarray(0, 8).equals(discriminatorOf(name))).toBe(true);
    expect(decodeInstructionData(data)).toEqual({ name, args });
  });

  it('accepts safe-integer numbers for u64 and decodes them as bigint', () => {
    const data = encodeInstructionData('withdraw_earnings', { amount_lamports: 9_007_199_254_740_991 });
    expect(decodeInstructionData(data).args.amount_lamports).toBe(9_007_199_254_740_991n);
  });

  it('refuses values that do not fit, naming the argument', () => {
    const encode = (args: Record<string, any>) => () => encodeInstructionData('purchase_access', args);
    expect(encode({ periods: -1, deposit_lamports: 0n })).toThrow(
      'purchase_access.periods: -1 is outside the u32 range 0..4294967295.',
    );
    expect(encode({ periods: 2 ** 32, deposit_lamports: 0n })).toThrow(
      /periods: 4294967296 is outside the u32 range/,
    );
    expect(encode({ periods: 1, deposit_lamports: 1n << 64n })).toThrow(
      /deposit_lamports: .* outside the u64 range/,
    );
    expect(encode({ periods: 1.5, deposit_lamports: 0n })).toThrow(
      'purchase_access.periods: expected an integer (u32), got 1.5.',
    );
    expect(encode({ periods: 1 })).toThrow('purchase_access.deposit_lamports: missing (u64).');
    expect(encode({ periods: 1, deposit_lamports: 0n, extra: 1 })).toThrow(/unknown field extra/);
    expect(() =>
      encodeInstructionData('create_listing', {
        listing_id: 'lst_a',
        access_model: 'Forever',
        price_lamports: 1n,
        subscription_days: 0,
      }),
    ).toThrow(
      'create_listing.access_model: expected one of OneTime, Subscription, PerQuery (AccessModel), got "Forever".',
    );
    expect(() => encodeInstructionData('mint_tokens', {})).toThrow("has no instruction 'mint_tokens'");
  });

  it('refuses data that is short or names no instruction', () => {
    expect(() => decodeInstructionData(Buffer.alloc(3))).toThrow(
      /3 bytes, shorter than the 8-byte discriminator/,
    );
    expect(() => decodeInstructionData(Buffer.alloc(8, 7))).toThrow(
      /starts with 0707070707070707, no instruction/,
    );
    const truncated = encodeInstructionData('withdraw_earnings', { amount_lamports: 1n }).subarray(0, 12);
    expect(() => decodeInstructionData(truncated)).toThrow(
      'withdraw_earnings.amount_lamports: the data ends at byte 12, 4 short of the u64 at offset 8.',
    );
  });
});

describe('accounts', () => {
  it('round-trips a Listing at its allocated size, padding included', () => {
    const data = encodeListingAccount(listing);
    expect(data.length).toBe(LISTING_ACCOUNT_SPACE);
    expect(data.subarray(0, 8)).toEqual(
      Buffer.from(MARKETPLACE_IDL.accounts.find((a) => a.name === 'Listing')!.discriminator),
    );
    expect(decodeListingAccount(data)).toEqual(listing);
  });

  it('round-trips an AccessCredential', () => {
    const data = encodeCredentialAccount(credential);
    expect(data.length).toBe(CREDENTIAL_ACCOUNT_SPACE);
    expect(decodeCredentialAccount(data)).toEqual(credential);
    const subscription = {
      ...credential,
      accessModel: 'subscription' as const,
      expiresAt: 1_769_904_000,
      balanceLamports: 0n,
    };
    expect(decodeCredentialAccount(encodeCredentialAccount(subscription))).toEqual(subscription);
  });

  it('lays out a credential field by field', () => {
    const data = encodeCredentialAccount(credential);
    expect(new PublicKey(data.subarray(8, 40)).toBase58()).toBe(credential.listing);
    expect(new PublicKey(data.subarray(40, 72)).toBase58()).toBe(holder);
    expect(data[72]).toBe(2); // PerQuery
    expect(data.readBigInt64LE(73)).toBe(0n);
    expect(data.readBigUInt64LE(81)).toBe(5_000_000n);
    expect(data.readBigInt64LE(89)).toBe(1_767_225_600n);
    expect(data[97]).toBe(251);
  });

  it('refuses short data, the wrong account type and garbled fields with the address in the message', () => {
    const data = encodeListingAccount(listing);
    expect(() => decodeListingAccount(data.subarray(0, 5), 'PdaAddr')).toThrow(
      'Account PdaAddr: 5 bytes of data, shorter than the 8-byte discriminator of a Listing account.',
    );
    expect(() => decodeListingAccount(encodeCredentialAccount(credential), 'PdaAddr')).toThrow(
      'Account PdaAddr: holds a AccessCredential account, not a Listing.',
    );
    expect(() => decodeCredentialAccount(Buffer.alloc(98, 9), 'PdaAddr')).toThrow(
      /PdaAddr: is not a AccessCredential account of kb_marketplace \(discriminator 0909090909090909\)/,
    );
    expect(() => decodeListingAccount(data.subarray(0, 50), 'PdaAddr')).toThrow(
      /Account PdaAddr: Listing\.listing_id: the data ends at byte 50, 14 short of the string of 20 bytes at offset 44/,
    );
    const badVariant = Buffer.from(data);
    badVariant[8 + 32 + 4 + 20] = 7;
    expect(() => decodeListingAccount(badVariant, 'PdaAddr')).toThrow(
      'Account PdaAddr: Listing.access_model: variant index 7 is not a AccessModel (3 variants).',
    );
    const badUtf8 = Buffer.from(data);
    badUtf8[8 + 32 + 4] = 0xff;
    expect(() => decodeListingAccount(badUtf8, 'PdaAddr')).toThrow(
      'Account PdaAddr: Listing.listing_id: the string bytes are not valid UTF-8.',
    );
    const error = (() => {
      try {
        decodeListingAccount(data.subarray(0, 5), 'PdaAddr');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(InvalidAccountData);
    expect((error as InvalidAccountData).code).toBe('internal_error');
  });

  it('encodes generic structs and return data through the same IDL walk', () => {
    const raw = decodeAccountData(
      'Listing',
      encodeAccountData('Listing', {
        creator: new PublicKey(creator),
        listing_id: 'lst_x',
        access_model: 'OneTime',
        price_lamports: 1n,
        subscription_days: 0,
        earned_lamports: 0n,
        withdrawn_lamports: 0n,
        bump: 1,
      }),
    );
    expect(raw.listing_id).toBe('lst_x');
    expect((raw.creator as PublicKey).toBase58()).toBe(creator);
    const type = { defined: { name: 'AccessVerification' } } as const;
    const value = { status: 'LowBalance', expires_at: -1n, balance_lamports: 3n };
    expect(decodeTypeData(type, encodeTypeData(type, value))).toEqual(value);
  });

  it('refuses a lone surrogate instead of writing a replacement character', () => {
    expect(() => encodeListingAccount({ ...listing, listingId: 'lst_\ud800' })).toThrow(
      'Listing.listing_id: the string is not valid Unicode (a lone surrogate).',
    );
  });
});
