import { PublicKey, TransactionInstruction } from '@solana/web3.js';
import type { AccessModel } from '../../../shared/listings';
import { InvalidInput } from '../../errors';
import { ACCESS_MODEL_VARIANTS } from './accounts';
import { encodeInstructionData, type IdlStruct } from './codec';
import { idlInstruction, type InstructionName } from './idl';
import { credentialPda, listingPda, toPublicKey, type Address } from './pda';

/** Lamports as bigint, or as a safe integer number. */
export type Lamports = bigint | number;

export interface CreateListingArgs {
  creator: Address;
  listingId: string;
  accessModel: AccessModel;
  /** per_query: one query; subscription: one period; one_time: the purchase. */
  priceLamports: Lamports;
  /** Period length; at least 1 for subscription, 0 (the default) otherwise. */
  subscriptionDays?: number;
}

export interface PurchaseAccessArgs {
  buyer: Address;
  /** The listing PDA. */
  listing: Address;
  /** one_time: 1; subscription: periods bought (>= 1); per_query: 0. */
  periods: number;
  /** per_query only: lamports prepaid for queries; 0 otherwise. */
  depositLamports: Lamports;
}

export interface VerifyAccessArgs {
  holder: Address;
  listing: Address;
}

export interface RevokeAccessArgs {
  /** The listing's creator or the credential's holder; signs. */
  authority: Address;
  holder: Address;
  listing: Address;
}

export interface WithdrawEarningsArgs {
  creator: Address;
  listing: Address;
  amountLamports: Lamports;
}

export function createListingInstruction(
  programId: Address,
  args: CreateListingArgs,
): TransactionInstruction {
  const program = toPublicKey(programId, 'programId');
  const variant = ACCESS_MODEL_VARIANTS[args.accessModel];
  if (!variant) {
    throw new InvalidInput(
      `accessModel: '${String(args.accessModel)}' is not one_time, subscription or per_query.`,
    );
  }
  const creator = toPublicKey(args.creator, 'creator');
  const [listing] = listingPda(program, creator, args.listingId);
  return build(
    program,
    'create_listing',
    { creator, listing },
    {
      listing_id: args.listingId,
      access_model: variant,
      price_lamports: args.priceLamports,
      subscription_days: args.subscriptionDays ?? 0,
    },
  );
}

export function purchaseAccessInstruction(
  programId: Address,
  args: PurchaseAccessArgs,
): TransactionInstruction {
  const program = toPublicKey(programId, 'programId');
  const buyer = toPublicKey(args.buyer, 'buyer');
  const listing = toPublicKey(args.listing, 'listing');
  const [credential] = credentialPda(program, listing, buyer);
  return build(
    program,
    'purchase_access',
    { buyer, listing, credential },
    {
      periods: args.periods,
      deposit_lamports: args.depositLamports,
    },
  );
}

/** Read-only: sets an `AccessVerification` as return data (for simulation; needs no signature). */
export function verifyAccessInstruction(programId: Address, args: VerifyAccessArgs): TransactionInstruction {
  const program = toPublicKey(programId, 'programId');
  const holder = toPublicKey(args.holder, 'holder');
  const listing = toPublicKey(args.listing, 'listing');
  const [credential] = credentialPda(program, listing, holder);
  return build(program, 'verify_access', { holder, listing, credential }, {});
}

export function revokeAccessInstruction(programId: Address, args: RevokeAccessArgs): TransactionInstruction {
  const program = toPublicKey(programId, 'programId');
  const holder = toPublicKey(args.holder, 'holder');
  const listing = toPublicKey(args.listing, 'listing');
  const [credential] = credentialPda(program, listing, holder);
  const authority = toPublicKey(args.authority, 'authority');
  return build(program, 'revoke_access', { authority, holder, listing, credential }, {});
}

export function withdrawEarningsInstruction(
  programId: Address,
  args: WithdrawEarningsArgs,
): TransactionInstruction {
  const program = toPublicKey(programId, 'programId');
  return build(
    program,
    'withdraw_earnings',
    { creator: toPublicKey(args.creator, 'creator'), listing: toPublicKey(args.listing, 'listing') },
    { amount_lamports: args.amountLamports },
  );
}

/** Account metas in the IDL's order with its signer/writable flags; fixed addresses from the IDL. */
function build(
  programId: PublicKey,
  name: InstructionName,
  accounts: Record<string, PublicKey>,
  args: IdlStruct,
): TransactionInstruction {
  const ix = idlInstruction(name);
  const keys = ix.accounts.map((account) => {
    const pubkey = account.address ? new PublicKey(account.address) : accounts[account.name];
    if (!pubkey) throw new InvalidInput(`${name}: the account '${account.name}' is missing.`);
    return { pubkey, isSigner: account.signer === true, isWritable: account.writable === true };
  });
  return new TransactionInstruction({ programId, keys, data: encodeInstructionData(name, args) });
}
