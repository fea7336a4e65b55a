import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import type { Listing } from '../../../shared/listings';
import { Conflict, InvalidInput, NotFound } from '../../errors';
import { newId } from '../../ids';
import { lamportsToSol, solToLamports } from '../../money';
import { isWalletAddress, verifySignature } from '../../wallets/keypair';
import type { CredentialRepository } from '../credentials';
import type { ListingService } from '../listings';
import { isoInstant } from '../isoInstant';
import type {
  AccessPurchased,
  AccessRecord,
  AccessRevoked,
  AccessVerification,
  Earnings,
  EarningsWithdrawn,
  Ledger,
  LedgerInstruction,
  ListingCreated,
  PdaDeriver,
  PurchaseAccessArgs,
  SignedInstruction,
  SignedListingTransaction,
  WalletFlows,
} from './ledger';
import { signedMessageBytes } from './listingTransaction';
import { LEDGER_MESSAGE_PREFIX, LedgerSignatureRejected, verifyInstruction } from './signing';

/** Which ledger executed an instruction: the embedded one, or the program on a Solana cluster. */
export type LedgerKind = Ledger['kind'];

/** One accepted instruction, with the signature and the exact message it was accepted on. */
export interface LedgerEntry {
  instruction: LedgerInstruction;
  listingId: string;
  wallet: string;
  amountLamports: number;
  signature: string;
  message: string;
  createdAt: string;
  /**
   * `solana`: the instruction ran on chain and this is the studio's record of it (the amount moved
   * there); `local`: the embedded ledger ran it (its amounts are bookkeeping, no SOL moved).
   */
  ledger: LedgerKind;
}

export interface LedgerRepository {
  /** Runs `fn` in one SQLite transaction (credentials, entries and earnings share the database). */
  transaction<T>(fn: () => T): T;
  /** Runs `fn` in a transaction that is always rolled back; its errors pass through. */
  dryRun(fn: () => unknown): void;
  signatureUsed(signature: string): boolean;
  append(entry: LedgerEntry): void;
  entries(listingId?: string): LedgerEntry[];
  /** Whether the listing's create_listing ran on chain (an entry with ledger `solana`). */
  createdOnChain(listingId: string): boolean;
  earnings(listingId: string): { earnedLamports: number; withdrawnLamports: number };
  addEarned(listingId: string, lamports: number): void;
  addWithdrawn(listingId: string, lamports: number): void;
}

export interface LocalLedgerDeps {
  credentials: CredentialRepository;
  entries: LedgerRepository;
  listings: ListingService;
  pdas: PdaDeriver;
  now?: () => Date;
}

const DAY_MS = 86_400_000;
const MAX_PERIODS = 100;

/**
 * The embedded default ledger (DESIGN §3): the program's rules enforced over SQLite. Each instruction
 * is checked (signature, signer, the listing's terms) and applied in one transaction together with its
 * ledger entry, so a refused instruction changes nothing.
 *
 * It also keeps the studio's records of what the Solana ledger did on chain (`on = 'solana'`): those
 * entries are tagged, and their money is never counted as this ledger's. A listing created on chain
 * keeps its money and terms there: this ledger reports its earnings from the records of what happened
 * on chain, and refuses to sell it, pay it out or refund its paid credentials (docs/marketplace.md,
 * "Two ledgers, one set of records").
 */
export class LocalLedger implements Ledger {
  readonly kind = 'local' as const;
  private readonly now: () => Date;

  constructor(private readonly deps: LocalLedgerDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async createListing(
    signed: SignedInstruction<'create_listing'>,
    on: LedgerKind = 'local',
  ): Promise<ListingCreated> {
    return this.applyCreateListing(signed, on);
  }

  async purchaseAccess(
    signed: SignedInstruction<'purchase_access'>,
    on: LedgerKind = 'local',
  ): Promise<AccessPurchased> {
    return this.applyPurchaseAccess(signed, on);
  }

  async verifyAccess(listingId: string, holder: string): Promise<AccessVerification> {
    const listing = this.deps.listings.get(listingId, 'studio');
    return { credential: this.deps.credentials.find(listing.id, holder) ?? null, onChainVerified: false };
  }

  async revokeAccess(
    signed: SignedInstruction<'revoke_access'>,
    on: LedgerKind = 'local',
  ): Promise<AccessRevoked> {
    return this.applyRevokeAccess(signed, on);
  }

  async withdrawEarnings(signed: SignedInstruction<'withdraw_earnings'>): Promise<EarningsWithdrawn> {
    return this.applyWithdrawEarnings(signed);
  }

  async earnings(listingId: string): Promise<Earnings> {
    const listing = this.deps.listings.get(listingId, 'studio');
    return this.earningsNow(listing.id);
  }

  /** Whether the listing was created on chain (through the Solana ledger). */
  createdOnChain(listingId: string): boolean {
    return this.deps.entries.createdOnChain(listingId);
  }

  async published(listingId: string): Promise<boolean> {
    return this.recordedPublished(listingId, 'local');
  }

  /**
   * Whether the studio's records say `ledger` created the listing. A listing on chain counts as created
   * for the embedded ledger too: its terms and money are the chain's.
   */
  recordedPublished(listingId: string, ledger: LedgerKind): boolean {
    const listing = this.deps.listings.get(listingId, 'studio');
    if (listing.status !== 'published') return false;
    return this.deps.entries
      .entries(listing.id)
      .some((e) => e.instruction === 'create_listing' && (ledger === 'local' || e.ledger === 'solana'));
  }

  async recentBlockhash(): Promise<string> {
    // No cluster: 32 random bytes make each transaction, and so its signature, unique.
    return bs58.encode(randomBytes(32));
  }

  async createListingTransaction(
    signed: SignedListingTransaction,
    on: LedgerKind = 'local',
  ): Promise<ListingCreated> {
    return this.applyCreateListingTransaction(signed, on);
  }

  /**
   * A listing goes on chain only with nothing of it left on the embedded ledger: the program knows
   * neither the credentials bought here nor the earnings not yet paid out, so they would carry over
   * unbacked (a buyer querying on Solana on an embedded credential) or vanish from view (this ledger
   * refuses to pay out an on-chain listing). Test grants are the studio's own and stay. A listing the
   * studio already created on chain is past this: its paid credentials are the chain's.
   */
  refuseEmbeddedHoldings(listingId: string): void {
    const listing = this.deps.listings.get(listingId, 'studio');
    if (this.deps.entries.createdOnChain(listing.id)) return;
    const purchased = this.deps.credentials.listAll(listing.id).filter((c) => !c.testGrant).length;
    const { withdrawableLamports } = this.earningsNow(listing.id);
    if (purchased === 0 && withdrawableLamports === 0) return;
    const credentials = `${purchased} credential${purchased === 1 ? '' : 's'} bought`;
    const withdrawable = `${lamportsToSol(withdrawableLamports)} SOL`;
    throw new Conflict(
      `Listing '${listing.id}' holds ${credentials} on the embedded ledger and ${withdrawable} of embedded earnings to withdraw; the program on chain would know neither, so it cannot go on chain yet. With the embedded ledger in use (setting solana.rpcUrl empty), withdraw the earnings (\`kbstudio listings withdraw ${listing.id}\`) and revoke those credentials (\`kbstudio credentials revoke --listing ${listing.id} --wallet <holder>\`; revoking refunds a per-query balance), then publish it on Solana. Test grants may stay.`,
    );
  }

  /** Checks a signed create_listing transaction against the listing without recording it. */
  checkListingTransaction(signed: SignedListingTransaction, on: LedgerKind = 'local'): void {
    this.deps.entries.dryRun(() => this.applyCreateListingTransaction(signed, on));
  }

  /**
   * What a wallet paid and received through one ledger, from its entries only: payments made on chain
   * are never counted as embedded-ledger ones (the chain's balance already shows them).
   */
  walletFlows(address: string, on: LedgerKind = 'local'): WalletFlows {
    let paidLamports = 0;
    let receivedLamports = 0;
    for (const entry of this.deps.entries.entries()) {
      if (entry.amountLamports === 0 || entry.ledger !== on) continue;
      if (entry.instruction === 'purchase_access' && entry.wallet === address)
        paidLamports += entry.amountLamports;
      if (entry.instruction === 'withdraw_earnings' && entry.wallet === address) {
        receivedLamports += entry.amountLamports;
      }
      // A refund goes to the holder, who is in the signed arguments (the signer may be the creator).
      if (entry.instruction === 'revoke_access' && holderOf(entry.message) === address) {
        receivedLamports += entry.amountLamports;
      }
    }
    return { paidLamports, receivedLamports };
  }

  /**
   * Applies an instruction's checks and effects, then rolls them back: throws exactly what applying
   * it would throw, and writes nothing. The Solana ledger asks this before it pays a transaction fee.
   */
  check(signed: SignedInstruction, on: LedgerKind = 'local'): void {
    this.deps.entries.dryRun(() => {
      switch (signed.instruction) {
        case 'create_listing':
          return this.applyCreateListing(signed as SignedInstruction<'create_listing'>, on);
        case 'purchase_access':
          return this.applyPurchaseAccess(signed as SignedInstruction<'purchase_access'>, on);
        case 'revoke_access':
          return this.applyRevokeAccess(signed as SignedInstruction<'revoke_access'>, on);
        case 'withdraw_earnings':
          return this.applyWithdrawEarnings(signed as SignedInstruction<'withdraw_earnings'>);
      }
    });
  }

  /**
   * Records a withdrawal the program on chain made (its signature verified by the caller): the entry,
   * tagged `solana`, is what the studio knows of the payout once another network is chosen.
   */
  recordOnChainWithdrawal(
    signed: SignedInstruction<'withdraw_earnings'>,
    message: string,
    listingId: string,
    amountLamports: number,
  ): void {
    this.deps.entries.transaction(() =>
      this.record(signed, message, listingId, signed.signer, amountLamports, 'solana'),
    );
  }

  private applyCreateListing(signed: SignedInstruction<'create_listing'>, on: LedgerKind): ListingCreated {
    const { args } = signed;
    const listing = this.deps.listings.get(args.listingId, 'studio');
    const message = verifyInstruction(signed, [listing.creatorWallet]);
    if (args.creator !== listing.creatorWallet) {
      throw new LedgerSignatureRejected(
        `create_listing: listing '${listing.id}' belongs to ${listing.creatorWallet}, not ${args.creator}.`,
      );
    }
    checkTerms('create_listing', listing, args);
    if ((args.subscriptionDays ?? null) !== listing.subscriptionDays) {
      throw new Conflict(
        `create_listing: the signed subscriptionDays (${args.subscriptionDays}) differ from the listing's (${listing.subscriptionDays}).`,
      );
    }
    const pdaAddress = this.deps.pdas.listing(listing.creatorWallet, listing.id);
    this.deps.entries.transaction(() =>
      this.record(signed, message, listing.id, listing.creatorWallet, 0, on),
    );
    return { pdaAddress, signature: signed.signature };
  }

  private applyCreateListingTransaction(signed: SignedListingTransaction, on: LedgerKind): ListingCreated {
    const listing = this.deps.listings.get(signed.listingId, 'studio');
    if (signed.creator !== listing.creatorWallet) {
      throw new LedgerSignatureRejected(
        `create_listing: listing '${listing.id}' belongs to ${listing.creatorWallet}, not ${signed.creator}.`,
      );
    }
    // Never the caller's word: the signature is checked again over the message it covers.
    let signature: Uint8Array;
    try {
      signature = bs58.decode(signed.signature);
    } catch {
      throw new LedgerSignatureRejected('create_listing: the signature is not base58.');
    }
    if (!verifySignature(listing.creatorWallet, signedMessageBytes(signed), signature)) {
      throw new LedgerSignatureRejected(
        `create_listing: the signature does not verify for wallet ${listing.creatorWallet} over the transaction.`,
      );
    }
    checkTerms('create_listing', listing, signed);
    if (signed.subscriptionDays !== (listing.subscriptionDays ?? 0)) {
      throw new Conflict(
        `create_listing: the signed subscriptionDays (${signed.subscriptionDays}) differ from the listing's (${listing.subscriptionDays ?? 0}).`,
      );
    }
    const pdaAddress = this.deps.pdas.listing(listing.creatorWallet, listing.id);
    this.deps.entries.transaction(() => {
      if (this.deps.entries.signatureUsed(signed.signature)) {
        throw new Conflict('This signed create_listing was already processed; sign a new one.');
      }
      this.deps.entries.append({
        instruction: 'create_listing',
        listingId: listing.id,
        wallet: listing.creatorWallet,
        amountLamports: 0,
        signature: signed.signature,
        message: signed.message,
        createdAt: this.now().toISOString(),
        ledger: on,
      });
    });
    return { pdaAddress, signature: signed.signature };
  }

  private applyPurchaseAccess(signed: SignedInstruction<'purchase_access'>, on: LedgerKind): AccessPurchased {
    const { args } = signed;
    const listing = this.deps.listings.get(args.listingId, 'studio');
    if (listing.status !== 'published') {
      throw new Conflict(`Listing '${listing.id}' is a draft: publish it before granting or selling access.`);
    }
    if (!isWalletAddress(args.holder)) {
      throw new InvalidInput(`wallet: '${args.holder}' is not a base58 wallet address.`);
    }
    if (args.holder === listing.creatorWallet) {
      throw new InvalidInput(
        `wallet: ${args.holder} created listing '${listing.id}' and can always query it; it needs no credential.`,
      );
    }
    const testGrant = args.payer !== args.holder;
    if (testGrant && args.payer !== listing.creatorWallet) {
      throw new LedgerSignatureRejected(
        `purchase_access is paid by the holder ${args.holder}, or granted for testing by the listing's creator ${listing.creatorWallet}; not by ${args.payer}.`,
      );
    }
    const message = verifyInstruction(signed, [args.payer]);
    checkTerms('purchase_access', listing, args);
    if (!testGrant && on === 'local') this.refuseOnChain(listing, 'sell access to it');
    const priceLamports = solToLamports(listing.price);

    return this.deps.entries.transaction(() => {
      const existing = this.deps.credentials.find(listing.id, args.holder);
      const now = this.now();
      const terms = testGrant
        ? grantTerms(listing, args, existing, now)
        : purchaseTerms(listing, args, existing, priceLamports, now);
      const at = now.toISOString();
      const credential: AccessRecord = {
        id: existing?.id ?? newId('crd'),
        listingId: listing.id,
        holderWallet: args.holder,
        accessModel: listing.accessModel,
        expiresAt: terms.expiresAt,
        balanceLamports: terms.balanceLamports,
        pdaAddress: this.credentialPda(listing, args.holder),
        testGrant,
        createdAt: existing?.createdAt ?? at,
        updatedAt: at,
      };
      this.record(signed, message, listing.id, args.payer, terms.paidLamports, on);
      this.deps.credentials.save(credential);
      // A per-query deposit stays the holder's until queries spend it; everything else is earned now.
      // A payment made on chain is the listing account's there, never this ledger's.
      if (on === 'local' && listing.accessModel !== 'per_query' && terms.paidLamports > 0) {
        this.deps.entries.addEarned(listing.id, terms.paidLamports);
      }
      return { credential, amountLamports: terms.paidLamports, signature: signed.signature };
    });
  }

  private applyRevokeAccess(signed: SignedInstruction<'revoke_access'>, on: LedgerKind): AccessRevoked {
    const { args } = signed;
    const listing = this.deps.listings.get(args.listingId, 'studio');
    const message = verifyInstruction(signed, [listing.creatorWallet, args.holder]);
    return this.deps.entries.transaction(() => {
      const existing = this.deps.credentials.find(listing.id, args.holder);
      if (!existing) {
        throw new NotFound(`Wallet ${args.holder} holds no credential for listing '${listing.id}'.`);
      }
      if (!existing.testGrant && on === 'local') {
        this.refuseOnChain(listing, `revoke ${args.holder}'s paid credential (its account is there)`);
      }
      // The unspent part of a paid per-query deposit goes back to the holder; a test grant was never
      // paid. On chain the program refunds nothing (refunds are outside it), so nothing is recorded.
      const refundedLamports =
        on === 'local' && existing.accessModel === 'per_query' && !existing.testGrant
          ? existing.balanceLamports
          : 0;
      this.record(signed, message, listing.id, signed.signer, refundedLamports, on);
      this.deps.credentials.delete(listing.id, args.holder);
      return { refundedLamports, signature: signed.signature };
    });
  }

  private applyWithdrawEarnings(signed: SignedInstruction<'withdraw_earnings'>): EarningsWithdrawn {
    const { args } = signed;
    const listing = this.deps.listings.get(args.listingId, 'studio');
    const message = verifyInstruction(signed, [listing.creatorWallet]);
    if (args.creator !== listing.creatorWallet) {
      throw new LedgerSignatureRejected(
        `withdraw_earnings: listing '${listing.id}' pays out to its creator ${listing.creatorWallet} only.`,
      );
    }
    this.refuseOnChain(listing, 'pay out its earnings');
    return this.deps.entries.transaction(() => {
      const { withdrawableLamports } = this.earningsNow(listing.id);
      if (withdrawableLamports === 0) {
        throw new Conflict(`Listing '${listing.id}' has no earnings to withdraw.`);
      }
      if (args.amountLamports !== withdrawableLamports) {
        throw new Conflict(
          `withdraw_earnings: listing '${listing.id}' can pay out exactly ${withdrawableLamports} lamports, not ${args.amountLamports}.`,
        );
      }
      this.record(signed, message, listing.id, listing.creatorWallet, withdrawableLamports);
      this.deps.entries.addWithdrawn(listing.id, withdrawableLamports);
      return { amountLamports: withdrawableLamports, signature: signed.signature };
    });
  }

  /**
   * A listing created on chain keeps its money there: the embedded ledger moves none of it. Its
   * payments are the program's, so they are refused here, with the way to make them.
   */
  private refuseOnChain(listing: Listing, what: string): void {
    if (!this.deps.entries.createdOnChain(listing.id)) return;
    throw new Conflict(
      `Listing '${listing.id}' was created on chain${listing.pdaAddress ? ` at ${listing.pdaAddress}` : ''}; its payments are the program's there, so the embedded ledger cannot ${what}. Choose that Solana network (setting solana.rpcUrl) and try again.`,
    );
  }

  /**
   * The embedded ledger's books (listing_earnings), or for a listing created on chain the studio's
   * records of what happened there: the payments (a per-query deposit counts when paid, as on chain)
   * and the payouts recorded with ledger `solana`.
   */
  private earningsNow(listingId: string): Earnings {
    const { earnedLamports, withdrawnLamports } = this.deps.entries.createdOnChain(listingId)
      ? this.onChainRecords(listingId)
      : this.deps.entries.earnings(listingId);
    return {
      listingId,
      earnedLamports,
      withdrawnLamports,
      withdrawableLamports: earnedLamports - withdrawnLamports,
    };
  }

  private onChainRecords(listingId: string): { earnedLamports: number; withdrawnLamports: number } {
    let earnedLamports = 0;
    let withdrawnLamports = 0;
    for (const entry of this.deps.entries.entries(listingId)) {
      if (entry.ledger !== 'solana') continue;
      if (entry.instruction === 'purchase_access') earnedLamports += entry.amountLamports;
      if (entry.instruction === 'withdraw_earnings') withdrawnLamports += entry.amountLamports;
    }
    return { earnedLamports, withdrawnLamports };
  }

  private credentialPda(listing: Listing, holder: string): string {
    const listingPda = listing.pdaAddress ?? this.deps.pdas.listing(listing.creatorWallet, listing.id);
    return this.deps.pdas.credential(listingPda, holder);
  }

  /** Appends the entry; a signature is accepted once (the unique index is the last word on races). */
  private record(
    signed: SignedInstruction,
    message: string,
    listingId: string,
    wallet: string,
    amountLamports: number,
    ledger: LedgerKind = 'local',
  ): void {
    if (this.deps.entries.signatureUsed(signed.signature)) {
      throw new Conflict(`This signed ${signed.instruction} was already processed; sign a new one.`);
    }
    this.deps.entries.append({
      instruction: signed.instruction,
      listingId,
      wallet,
      amountLamports,
      signature: signed.signature,
      message,
      createdAt: this.now().toISOString(),
      ledger,
    });
  }
}

/** The holder named in a revoke_access entry's signed message, if it is one. */
function holderOf(message: string): string | undefined {
  const prefix = `${LEDGER_MESSAGE_PREFIX}:revoke_access:`;
  if (!message?.startsWith(prefix)) return undefined;
  try {
    return (JSON.parse(message.slice(prefix.length)) as { holder?: string }).holder;
  } catch {
    return undefined;
  }
}

interface Terms {
  expiresAt: string | null;
  balanceLamports: number;
  paidLamports: number;
}

/** The signed terms must be the listing's current ones: nobody pays a price they did not sign. */
function checkTerms(
  instruction: 'create_listing' | 'purchase_access',
  listing: Listing,
  args: { accessModel: string; priceLamports: number },
): void {
  const price = solToLamports(listing.price);
  if (args.accessModel !== listing.accessModel || args.priceLamports !== price) {
    throw new Conflict(
      `${instruction}: the signed terms (${args.accessModel}, ${args.priceLamports} lamports) differ from listing '${listing.id}' (${listing.accessModel}, ${price} lamports).`,
    );
  }
}

/** A holder's purchase: one price, whole subscription periods, or a per-query deposit. */
function purchaseTerms(
  listing: Listing,
  args: PurchaseAccessArgs,
  existing: AccessRecord | undefined,
  priceLamports: number,
  now: Date,
): Terms {
  if (args.expiresAt !== undefined || args.balanceLamports !== undefined) {
    throw new InvalidInput(
      'purchase_access: only a test grant by the listing creator sets expiresAt or balance directly.',
    );
  }
  if (existing?.testGrant) {
    throw new Conflict(
      `Wallet ${args.holder} holds a test grant for listing '${listing.id}'; revoke it before buying access.`,
    );
  }
  switch (listing.accessModel) {
    case 'one_time':
      noneOf(args, ['periods', 'depositLamports'], 'a one_time purchase');
      if (existing) {
        throw new Conflict(`Wallet ${args.holder} already holds one_time access to listing '${listing.id}'.`);
      }
      return { expiresAt: null, balanceLamports: 0, paidLamports: priceLamports };
    case 'subscription': {
      noneOf(args, ['depositLamports'], 'a subscription purchase');
      const periods = args.periods ?? 1;
      if (!Number.isInteger(periods) || periods < 1 || periods > MAX_PERIODS) {
        throw new InvalidInput(`periods: expected a whole number of periods from 1 to ${MAX_PERIODS}.`);
      }
      // Renewing extends from the current end when it is still ahead, else from now.
      const from = Math.max(now.getTime(), existing?.expiresAt ? Date.parse(existing.expiresAt) : 0);
      return {
        expiresAt: new Date(from + periods * listing.subscriptionDays! * DAY_MS).toISOString(),
        balanceLamports: 0,
        paidLamports: priceLamports * periods,
      };
    }
    case 'per_query': {
      noneOf(args, ['periods'], 'a per_query purchase');
      const deposit = args.depositLamports;
      if (deposit === undefined || !Number.isSafeInteger(deposit) || deposit <= 0) {
        throw new InvalidInput(
          deposit !== undefined && deposit > Number.MAX_SAFE_INTEGER
            ? `deposit: ${deposit} lamports is more than a balance can hold (${Number.MAX_SAFE_INTEGER}).`
            : 'deposit: a per_query purchase deposits a balance above 0 SOL.',
        );
      }
      // The program's rule (InvalidDeposit): a deposit covers at least one query.
      if (deposit < priceLamports) {
        throw new InvalidInput(
          `deposit: ${lamportsToSol(deposit)} SOL is less than one query of listing '${listing.id}' (${lamportsToSol(priceLamports)} SOL); a per_query deposit must cover at least one query.`,
        );
      }
      const balanceLamports = (existing?.balanceLamports ?? 0) + deposit;
      if (!Number.isSafeInteger(balanceLamports)) {
        throw new InvalidInput(
          `deposit: the balance would be ${lamportsToSol(balanceLamports)} SOL, more than it can hold exactly.`,
        );
      }
      return {
        expiresAt: null,
        balanceLamports,
        paidLamports: deposit,
      };
    }
  }
}

/** A creator's test grant: free, and its terms are set as given so every state can be reached. */
function grantTerms(
  listing: Listing,
  args: PurchaseAccessArgs,
  existing: AccessRecord | undefined,
  now: Date,
): Terms {
  if (existing && !existing.testGrant) {
    throw new Conflict(
      `Wallet ${args.holder} bought access to listing '${listing.id}'; a test grant would overwrite a paid credential.`,
    );
  }
  noneOf(args, ['depositLamports'], 'a test grant (use balance)');
  switch (listing.accessModel) {
    case 'one_time':
      noneOf(args, ['periods', 'expiresAt', 'balanceLamports'], 'a one_time credential');
      return { expiresAt: null, balanceLamports: 0, paidLamports: 0 };
    case 'subscription': {
      noneOf(args, ['balanceLamports'], 'a subscription credential');
      if (args.expiresAt !== undefined) {
        return { expiresAt: isoInstant(args.expiresAt, 'expiresAt'), balanceLamports: 0, paidLamports: 0 };
      }
      const periods = args.periods ?? 1;
      if (!Number.isInteger(periods) || periods < 1 || periods > MAX_PERIODS) {
        throw new InvalidInput(`periods: expected a whole number of periods from 1 to ${MAX_PERIODS}.`);
      }
      const expiresAt = now.getTime() + periods * listing.subscriptionDays! * DAY_MS;
      return { expiresAt: new Date(expiresAt).toISOString(), balanceLamports: 0, paidLamports: 0 };
    }
    case 'per_query': {
      noneOf(args, ['periods', 'expiresAt'], 'a per_query credential');
      const balance = args.balanceLamports;
      if (balance === undefined || !Number.isSafeInteger(balance) || balance < 0) {
        throw new InvalidInput('balance: a per_query test grant needs a balance of 0 SOL or more.');
      }
      return { expiresAt: null, balanceLamports: balance, paidLamports: 0 };
    }
  }
}

const FIELD_NAMES: Record<string, string> = {
  periods: 'periods',
  depositLamports: 'deposit',
  expiresAt: 'expiresAt',
  balanceLamports: 'balance',
};

function noneOf(args: PurchaseAccessArgs, fields: (keyof PurchaseAccessArgs)[], what: string): void {
  const given = fields.find((f) => args[f] !== undefined);
  if (given) throw new InvalidInput(`${FIELD_NAMES[given] ?? given}: does not apply to ${what}.`);
}
