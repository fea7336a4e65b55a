import type { AccessModel } from '../../../shared/listings';

/** The on-chain program's instructions (spec §3), in the program's own names. */
export const LEDGER_INSTRUCTIONS = [
  'create_listing',
  'purchase_access',
  'verify_access',
  'revoke_access',
  'withdraw_earnings',
] as const;
export type LedgerInstruction = (typeof LEDGER_INSTRUCTIONS)[number];

/** Every signed instruction carries a random nonce, so two identical requests are two messages. */
interface Signable {
  nonce: string;
}

/** Signed by the creator: the listing's terms as they are put on the ledger. */
export interface CreateListingArgs extends Signable {
  listingId: string;
  creator: string;
  accessModel: AccessModel;
  priceLamports: number;
  subscriptionDays: number | null;
}

/**
 * Signed by the payer. A purchase is paid by the holder and follows the listing's terms: `periods`
 * of a subscription, a per-query `depositLamports`. A test grant is signed by the listing's creator
 * for another wallet, moves no money, and sets the terms directly (`expiresAt`, `balanceLamports`)
 * so every credential state can be tried.
 */
export interface PurchaseAccessArgs extends Signable {
  listingId: string;
  holder: string;
  payer: string;
  /** The terms the payer agreed to; refused when the listing's differ. */
  accessModel: AccessModel;
  priceLamports: number;
  periods?: number;
  depositLamports?: number;
  expiresAt?: string;
  balanceLamports?: number;
}

/** Signed by the listing's creator or by the holder. */
export interface RevokeAccessArgs extends Signable {
  listingId: string;
  holder: string;
}

/** Signed by the creator; the amount must be exactly what the listing can pay out. */
export interface WithdrawEarningsArgs extends Signable {
  listingId: string;
  creator: string;
  amountLamports: number;
}

export interface InstructionArgs {
  create_listing: CreateListingArgs;
  purchase_access: PurchaseAccessArgs;
  revoke_access: RevokeAccessArgs;
  withdraw_earnings: WithdrawEarningsArgs;
}
export type SignedInstructionName = keyof InstructionArgs;

/** An instruction with the base58 ed25519 signature of its canonical message (signing.ts) by `signer`. */
export interface SignedInstruction<N extends SignedInstructionName = SignedInstructionName> {
  instruction: N;
  args: InstructionArgs[N];
  signer: string;
  signature: string;
}

/** A credential as the ledger holds it: one holder, one listing, the terms of its access model. */
export interface AccessRecord {
  id: string;
  listingId: string;
  holderWallet: string;
  accessModel: AccessModel;
  expiresAt: string | null;
  balanceLamports: number;
  pdaAddress: string | null;
  testGrant: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface Earnings {
  listingId: string;
  earnedLamports: number;
  withdrawnLamports: number;
  withdrawableLamports: number;
}

export interface ListingCreated {
  pdaAddress: string;
  signature: string;
  /**
   * Another request created the listing account between this one's read of the chain and its send (a
   * CLI command and the studio on one data directory): the account is there with these terms, but this
   * request's transaction was refused and nothing of it was recorded; the request that created it
   * records it.
   */
  createdElsewhere?: true;
}

export interface AccessPurchased {
  credential: AccessRecord;
  /** What the payer paid: 0 for a test grant. */
  amountLamports: number;
  signature: string;
}

export interface AccessVerification {
  credential: AccessRecord | null;
  /** True only when an RPC lookup found the credential's account on chain. */
  onChainVerified: boolean;
}

export interface AccessRevoked {
  /** The unused per-query balance returned to the holder. */
  refundedLamports: number;
  signature: string;
}

export interface EarningsWithdrawn {
  amountLamports: number;
  signature: string;
}

/**
 * The marketplace program's five instructions. Every instruction that changes state arrives signed by
 * the wallet that must authorise it, and the ledger verifies the signature itself. `verify_access`
 * only reads, so it needs none.
 */
export interface Ledger {
  readonly kind: 'local' | 'solana';
  createListing(signed: SignedInstruction<'create_listing'>): Promise<ListingCreated>;
  purchaseAccess(signed: SignedInstruction<'purchase_access'>): Promise<AccessPurchased>;
  verifyAccess(listingId: string, holder: string): Promise<AccessVerification>;
  revokeAccess(signed: SignedInstruction<'revoke_access'>): Promise<AccessRevoked>;
  withdrawEarnings(signed: SignedInstruction<'withdraw_earnings'>): Promise<EarningsWithdrawn>;
  /** What a listing has earned and paid out (read; no instruction). */
  earnings(listingId: string): Promise<Earnings>;
  /**
   * A recent blockhash for a transaction a wallet is about to sign: the cluster's, or locally a random
   * one (it only makes each transaction, and so its signature, unique).
   */
  recentBlockhash(): Promise<string>;
  /** create_listing signed as a transaction by the creator's wallet (see SignedListingTransaction). */
  createListingTransaction(signed: SignedListingTransaction): Promise<ListingCreated>;
  /** Lamports a wallet paid and received through this ledger, from the studio's records of it. */
  walletFlows(address: string): WalletFlows;
  /**
   * Whether this ledger already created the published listing (publishing it again sends nothing). On
   * the embedded ledger a listing created on chain counts as created: its terms are the chain's. On
   * Solana the listing account must also be on the cluster in use (another cluster, or one reset, has
   * none of the studio's records).
   */
  published(listingId: string): Promise<boolean>;
}

/**
 * create_listing as a Solana transaction the creator's wallet signed through a wallet adapter (the
 * studio's or a browser wallet), already checked against the listing (listingTransaction.ts).
 */
export interface SignedListingTransaction {
  listingId: string;
  creator: string;
  accessModel: AccessModel;
  priceLamports: number;
  subscriptionDays: number;
  /** Base58 ed25519 signature of the creator over the transaction message. */
  signature: string;
  /** What the signature covers: `solana-tx:v1:<base64 of the message>`, kept in the ledger entry. */
  message: string;
  /** The signed transaction as sent to a cluster. */
  wire: Uint8Array;
}

/** What a wallet paid and received through the embedded ledger (it holds no real balances). */
export interface WalletFlows {
  paidLamports: number;
  receivedLamports: number;
}

/** Program-derived addresses of the records (DESIGN §3), with the configured program ID. */
export interface PdaDeriver {
  listing(creator: string, listingId: string): string;
  credential(listingPda: string, holder: string): string;
}
