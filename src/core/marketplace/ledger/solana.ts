import type { AccessModel } from '../../../shared/listings';
import { Conflict } from '../../errors';
import { lamportsToSol } from '../../money';
import type { CredentialRepository, WalletSigner } from '../credentials';
import type { ListingService } from '../listings';
import type { OnChainCredential, OnChainListing, ProgramSigner, SolanaProgramClient } from '../solana/client';
import { TransactionRejected } from '../solana/errors';
import type {
  AccessPurchased,
  AccessRecord,
  AccessRevoked,
  AccessVerification,
  Earnings,
  EarningsWithdrawn,
  Ledger,
  ListingCreated,
  SignedInstruction,
  SignedListingTransaction,
  WalletFlows,
} from './ledger';
import { LedgerSignatureRejected, verifyInstruction } from './signing';
import type { LocalLedger } from './local';

export interface SolanaLedgerDeps {
  /** Built when first used, so a bad setting is reported by the command that needs the chain. */
  client: () => SolanaProgramClient;
  /** The studio's own records (credentials for retrieval, ledger entries) and test grants. */
  local: LocalLedger;
  credentials: CredentialRepository;
  listings: ListingService;
  /** Signs the transactions of the wallets this studio holds. */
  signer: WalletSigner;
}

const lamports = (value: bigint): number => Number(value);

/** The terms a create_listing asks for, as the program stores them. */
interface ListingTerms {
  listingId: string;
  accessModel: AccessModel;
  priceLamports: number;
  subscriptionDays: number;
}

/** The program has no instruction that changes a listing's terms once its account exists. */
function refuseOtherTerms(existing: OnChainListing, address: string, terms: ListingTerms): void {
  if (
    existing.accessModel !== terms.accessModel ||
    lamports(existing.priceLamports) !== terms.priceLamports ||
    existing.subscriptionDays !== terms.subscriptionDays
  ) {
    throw new Conflict(
      `Listing '${terms.listingId}' is already on chain at ${address} with other terms (${existing.accessModel}, ${existing.priceLamports} lamports); on-chain terms cannot change, so create a new listing.`,
    );
  }
}

/** The System Program refused to create an account that exists (see createdMeanwhile). */
const accountInUse = (err: unknown): err is TransactionRejected =>
  err instanceof TransactionRejected && err.programError?.name === 'AccountAlreadyInUse';

/**
 * The marketplace program on a Solana cluster (DESIGN §3), through the RPC client. Each instruction is
 * first checked against the local rules without writing anything (so a refusal costs no fee), then sent
 * as a transaction signed by the wallet that signed the instruction, then recorded locally: retrieval
 * checks access against those local records, and per-query balances are metered locally. Test grants
 * are the studio's own and stay local. Verification looks the credential's PDA up over RPC.
 */
export class SolanaLedger implements Ledger {
  readonly kind = 'solana' as const;

  constructor(private readonly deps: SolanaLedgerDeps) {}

  async createListing(signed: SignedInstruction<'create_listing'>): Promise<ListingCreated> {
    const { local } = this.deps;
    const client = this.deps.client();
    local.check(signed, 'solana');
    const { args } = signed;
    const terms: ListingTerms = {
      listingId: args.listingId,
      accessModel: args.accessModel,
      priceLamports: args.priceLamports,
      subscriptionDays: args.subscriptionDays ?? 0,
    };
    const address = client.listingAddress(args.creator, args.listingId);
    const existing = await client.getListing(address);
    let signature = signed.signature;
    if (existing) {
      refuseOtherTerms(existing, address, terms);
    } else {
      local.refuseEmbeddedHoldings(args.listingId);
      try {
        ({ signature } = await client.createListing(this.programSigner(args.creator), terms));
      } catch (err) {
        return this.createdMeanwhile(err, address, terms, signature);
      }
    }
    await local.createListing(signed, 'solana');
    return { pdaAddress: address, signature };
  }

  /**
   * A create_listing refused because its account exists, though it did not when read just before: the
   * publishing queue is per process, so a CLI command and the studio on one data directory can both
   * read "not there" and both send. With the same terms the listing is created, as the caller asked:
   * the answer is the one a listing already on chain gets, and the request whose transaction created it
   * records it (this one's never landed). Any other error, or other terms, is thrown.
   */
  private async createdMeanwhile(
    err: unknown,
    address: string,
    terms: ListingTerms,
    signature: string,
  ): Promise<ListingCreated> {
    if (!accountInUse(err)) throw err;
    const existing = await this.deps.client().getListing(address);
    if (!existing) throw err;
    refuseOtherTerms(existing, address, terms);
    return { pdaAddress: address, signature, createdElsewhere: true };
  }

  async recentBlockhash(): Promise<string> {
    return (await this.deps.client().latestBlockhash()).blockhash;
  }

  /**
   * A transaction the creator's wallet signed: checked locally first (no fee for a refusal), sent as
   * signed unless the listing is already on chain with the same terms, then recorded locally. As with
   * `published`, a listing already on chain that the studio has recorded there is left as it is:
   * nothing is sent or recorded (the signature returned was never sent).
   */
  async createListingTransaction(signed: SignedListingTransaction): Promise<ListingCreated> {
    const { local } = this.deps;
    const client = this.deps.client();
    local.checkListingTransaction(signed, 'solana');
    const address = client.listingAddress(signed.creator, signed.listingId);
    const existing = await client.getListing(address);
    let signature = signed.signature;
    if (existing) {
      refuseOtherTerms(existing, address, signed);
      if (local.recordedPublished(signed.listingId, 'solana')) return { pdaAddress: address, signature };
    } else {
      local.refuseEmbeddedHoldings(signed.listingId);
      try {
        signature = await client.sendSignedTransaction(signed.wire);
      } catch (err) {
        return this.createdMeanwhile(err, address, signed, signature);
      }
    }
    await local.createListingTransaction(signed, 'solana');
    return { pdaAddress: address, signature };
  }

  walletFlows(address: string): WalletFlows {
    return this.deps.local.walletFlows(address, 'solana');
  }

  /**
   * The studio's records say where a listing was created, but not on which cluster: after another
   * cluster is chosen, or a validator reset, they name an account that is not there, and a listing
   * called published there could be sold nowhere. The listing account over RPC decides.
   */
  async published(listingId: string): Promise<boolean> {
    if (!this.deps.local.recordedPublished(listingId, 'solana')) return false;
    const listing = this.deps.listings.get(listingId, 'studio');
    const client = this.deps.client();
    return (await client.getListing(client.listingAddress(listing.creatorWallet, listing.id))) !== null;
  }

  /**
   * The buyer signed the listing's terms as the studio shows them; the program charges the listing
   * account's. Those can only differ if the local listing changed after it went on chain, and then the
   * purchase is refused (nothing sent) rather than charged an amount the buyer never agreed to.
   */
  async purchaseAccess(signed: SignedInstruction<'purchase_access'>): Promise<AccessPurchased> {
    const { args } = signed;
    if (args.payer !== args.holder) return this.deps.local.purchaseAccess(signed);
    this.deps.local.check(signed, 'solana');
    const listing = this.deps.listings.get(args.listingId, 'studio');
    const address = this.listingAddress(args.listingId);
    const client = this.deps.client();
    const onChain = await client.getListing(address);
    if (onChain) {
      const agreed = {
        accessModel: args.accessModel,
        priceLamports: args.priceLamports,
        subscriptionDays: listing.subscriptionDays ?? 0,
      };
      const chain = {
        accessModel: onChain.accessModel,
        priceLamports: lamports(onChain.priceLamports),
        subscriptionDays: onChain.subscriptionDays,
      };
      if (
        agreed.accessModel !== chain.accessModel ||
        agreed.priceLamports !== chain.priceLamports ||
        agreed.subscriptionDays !== chain.subscriptionDays
      ) {
        throw new Conflict(
          `purchase_access: listing '${listing.id}' is on chain at ${address} with the terms ${describeTerms(chain)}, but the buyer agreed to ${describeTerms(agreed)} (the studio's listing). The program charges its own terms and cannot change them, so nothing was sent; create a new listing with the new terms.`,
        );
      }
    }
    const { signature } = await client.purchaseAccess(this.programSigner(args.holder), {
      listing: address,
      periods: listing.accessModel === 'per_query' ? 0 : (args.periods ?? 1),
      depositLamports: args.depositLamports ?? 0,
    });
    const purchased = await this.deps.local.purchaseAccess(signed, 'solana');
    return { ...purchased, signature };
  }

  /**
   * A test grant is answered locally (`onChainVerified: false`). Otherwise the credential's PDA is
   * read over RPC: present, it is the record (its expiry from chain, its balance as metered here) and
   * `onChainVerified` is true; absent, there is no credential.
   */
  async verifyAccess(listingId: string, holder: string): Promise<AccessVerification> {
    const listing = this.deps.listings.get(listingId, 'studio');
    const local = this.deps.credentials.find(listing.id, holder);
    if (local?.testGrant) return { credential: local, onChainVerified: false };
    const found = await this.deps.client().verifyCredential(this.listingAddress(listing.id), holder);
    if (!found.credential || found.status === 'not_found')
      return { credential: null, onChainVerified: false };
    return {
      credential: fromChain(found.credential, found.expiresAt, listing.id, local),
      onChainVerified: true,
    };
  }

  async revokeAccess(signed: SignedInstruction<'revoke_access'>): Promise<AccessRevoked> {
    const { args } = signed;
    const held = this.deps.credentials.find(args.listingId, args.holder);
    if (!held || held.testGrant) return this.deps.local.revokeAccess(signed);
    this.deps.local.check(signed, 'solana');
    const { signature } = await this.deps.client().revokeAccess(this.programSigner(signed.signer), {
      listing: this.listingAddress(args.listingId),
      holder: args.holder,
    });
    const revoked = await this.deps.local.revokeAccess(signed, 'solana');
    return { ...revoked, signature };
  }

  /** The listing account holds the money on chain: its earned and withdrawn amounts are the truth. */
  async withdrawEarnings(signed: SignedInstruction<'withdraw_earnings'>): Promise<EarningsWithdrawn> {
    const { args } = signed;
    const listing = this.deps.listings.get(args.listingId, 'studio');
    const message = verifyInstruction(signed, [listing.creatorWallet]);
    if (args.creator !== listing.creatorWallet) {
      throw new LedgerSignatureRejected(
        `withdraw_earnings: listing '${listing.id}' pays out to its creator ${listing.creatorWallet} only.`,
      );
    }
    const { withdrawableLamports } = await this.earnings(listing.id);
    if (withdrawableLamports === 0)
      throw new Conflict(`Listing '${listing.id}' has no earnings to withdraw.`);
    if (args.amountLamports !== withdrawableLamports) {
      throw new Conflict(
        `withdraw_earnings: listing '${listing.id}' can pay out exactly ${withdrawableLamports} lamports, not ${args.amountLamports}.`,
      );
    }
    const { signature } = await this.deps
      .client()
      .withdrawEarnings(this.programSigner(listing.creatorWallet), {
        listing: this.listingAddress(listing.id),
        amountLamports: args.amountLamports,
      });
    this.deps.local.recordOnChainWithdrawal(signed, message, listing.id, args.amountLamports);
    return { amountLamports: args.amountLamports, signature };
  }

  async earnings(listingId: string): Promise<Earnings> {
    const listing = this.deps.listings.get(listingId, 'studio');
    const account = await this.deps.client().getListing(this.listingAddress(listing.id));
    const earnedLamports = account ? lamports(account.earnedLamports) : 0;
    const withdrawnLamports = account ? lamports(account.withdrawnLamports) : 0;
    return {
      listingId: listing.id,
      earnedLamports,
      withdrawnLamports,
      withdrawableLamports: earnedLamports - withdrawnLamports,
    };
  }

  private listingAddress(listingId: string): string {
    const listing = this.deps.listings.get(listingId, 'studio');
    return listing.pdaAddress ?? this.deps.client().listingAddress(listing.creatorWallet, listing.id);
  }

  private programSigner(address: string): ProgramSigner {
    return { publicKey: address, secretKey: this.deps.signer.secretKeyOf(address) };
  }
}

function describeTerms(t: { accessModel: string; priceLamports: number; subscriptionDays: number }): string {
  const price = `${lamportsToSol(t.priceLamports)} SOL (${t.priceLamports} lamports)`;
  if (t.accessModel === 'subscription') return `subscription, ${price} per ${t.subscriptionDays} days`;
  return t.accessModel === 'per_query' ? `per_query, ${price} per query` : `one_time, ${price}`;
}

function fromChain(
  account: OnChainCredential,
  expiresAt: string | null,
  listingId: string,
  local: AccessRecord | undefined,
): AccessRecord {
  const createdAt = new Date(account.createdAt * 1000).toISOString();
  return {
    id: local?.id ?? account.address,
    listingId,
    holderWallet: account.holder,
    accessModel: account.accessModel,
    expiresAt,
    // Queries are metered here, so the local balance is the current one; the chain holds deposits.
    balanceLamports: local?.balanceLamports ?? lamports(account.balanceLamports),
    pdaAddress: account.address,
    testGrant: false,
    createdAt: local?.createdAt ?? createdAt,
    updatedAt: local?.updatedAt ?? createdAt,
  };
}
