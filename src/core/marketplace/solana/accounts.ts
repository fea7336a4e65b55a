import type { PublicKey } from '@solana/web3.js';
import type { AccessModel } from '../../../shared/listings';
import { InvalidAccountData } from './errors';
import { decodeAccountData, encodeAccountData, type IdlStruct } from './codec';
import { MAX_SEED_BYTES } from './pda';

/** The program's `AccessModel` enum variants, in the studio's names. */
export const ACCESS_MODEL_VARIANTS = {
  one_time: 'OneTime',
  subscription: 'Subscription',
  per_query: 'PerQuery',
} as const satisfies Record<AccessModel, string>;

export function accessModelOfVariant(variant: string, address: string): AccessModel {
  const entry = Object.entries(ACCESS_MODEL_VARIANTS).find(([, v]) => v === variant);
  if (!entry) throw new InvalidAccountData(address, `unknown access model variant '${variant}'.`);
  return entry[0] as AccessModel;
}

/** A `Listing` account, pubkeys as base58, lamports as bigint. */
export interface ListingAccount {
  creator: string;
  listingId: string;
  accessModel: AccessModel;
  priceLamports: bigint;
  subscriptionDays: number;
  earnedLamports: bigint;
  withdrawnLamports: bigint;
  bump: number;
}

/** An `AccessCredential` account. Times are Unix seconds; `expiresAt` 0 = never. */
export interface CredentialAccount {
  listing: string;
  holder: string;
  accessModel: AccessModel;
  expiresAt: number;
  balanceLamports: bigint;
  createdAt: number;
  bump: number;
}

/** Allocated sizes (discriminator included), as the program's `InitSpace` gives them. */
export const LISTING_ACCOUNT_SPACE = 8 + 32 + (4 + MAX_SEED_BYTES) + 1 + 8 + 4 + 8 + 8 + 1;
export const CREDENTIAL_ACCOUNT_SPACE = 8 + 32 + 32 + 1 + 8 + 8 + 8 + 1;

export function decodeListingAccount(data: Uint8Array, address = 'listing'): ListingAccount {
  const raw = decodeAccountData('Listing', data, address);
  return {
    creator: (raw.creator as PublicKey).toBase58(),
    listingId: raw.listing_id as string,
    accessModel: accessModelOfVariant(raw.access_model as string, address),
    priceLamports: raw.price_lamports as bigint,
    subscriptionDays: raw.subscription_days as number,
    earnedLamports: raw.earned_lamports as bigint,
    withdrawnLamports: raw.withdrawn_lamports as bigint,
    bump: raw.bump as number,
  };
}

export function decodeCredentialAccount(data: Uint8Array, address = 'credential'): CredentialAccount {
  const raw = decodeAccountData('AccessCredential', data, address);
  return {
    listing: (raw.listing as PublicKey).toBase58(),
    holder: (raw.holder as PublicKey).toBase58(),
    accessModel: accessModelOfVariant(raw.access_model as string, address),
    expiresAt: secondsOf(raw.expires_at as bigint, 'expires_at', address),
    balanceLamports: raw.balance_lamports as bigint,
    createdAt: secondsOf(raw.created_at as bigint, 'created_at', address),
    bump: raw.bump as number,
  };
}

export function encodeListingAccount(listing: ListingAccount): Buffer {
  const value: IdlStruct = {
    creator: listing.creator,
    listing_id: listing.listingId,
    access_model: ACCESS_MODEL_VARIANTS[listing.accessModel],
    price_lamports: listing.priceLamports,
    subscription_days: listing.subscriptionDays,
    earned_lamports: listing.earnedLamports,
    withdrawn_lamports: listing.withdrawnLamports,
    bump: listing.bump,
  };
  return encodeAccountData('Listing', value, undefined, LISTING_ACCOUNT_SPACE);
}

export function encodeCredentialAccount(credential: CredentialAccount): Buffer {
  const value: IdlStruct = {
    listing: credential.listing,
    holder: credential.holder,
    access_model: ACCESS_MODEL_VARIANTS[credential.accessModel],
    expires_at: BigInt(credential.expiresAt),
    balance_lamports: credential.balanceLamports,
    created_at: BigInt(credential.createdAt),
    bump: credential.bump,
  };
  return encodeAccountData('AccessCredential', value, undefined, CREDENTIAL_ACCOUNT_SPACE);
}

export type OnChainAccessStatus = 'active' | 'expired' | 'low_balance';

/**
 * DESIGN §3's status rules on on-chain data (the program's verify_access applies the same):
 * one_time is active while it exists; subscription until `expiresAt`; per_query while the
 * balance covers one query price.
 */
export function credentialStatus(
  credential: CredentialAccount,
  listing: Pick<ListingAccount, 'priceLamports'>,
  nowSeconds: number,
): OnChainAccessStatus {
  switch (credential.accessModel) {
    case 'one_time':
      return 'active';
    case 'subscription':
      return credential.expiresAt > nowSeconds ? 'active' : 'expired';
    case 'per_query':
      return credential.balanceLamports >= listing.priceLamports ? 'active' : 'low_balance';
  }
}

function secondsOf(value: bigint, field: string, address: string): number {
  if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new InvalidAccountData(address, `${field} ${value} is not a plausible Unix time.`);
  }
  return Number(value);
}
