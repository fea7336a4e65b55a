import type {
  Credential,
  CredentialListQuery,
  CredentialStatus,
  CredentialVerification,
  StudioCredential,
} from '../../shared/credentials';
import { isWholeLamports, MAX_SOL_AMOUNT, WHOLE_LAMPORTS_MESSAGE, type Listing } from '../../shared/listings';
import type { Page } from '../../shared/pagination';
import { testBuyerStatesFor, type TestBuyerState } from '../../shared/studio';
import { InvalidInput, NotFound } from '../errors';
import { lamportsToSol, solToLamports } from '../money';
import { isWalletAddress } from '../wallets/keypair';
import type { AccessRecord, Ledger, PurchaseAccessArgs } from './ledger/ledger';
import { newNonce, signInstruction } from './ledger/signing';
import type { ListingService } from './listings';
import { isoInstant } from './isoInstant';

export interface CredentialRepository {
  find(listingId: string, holder: string): AccessRecord | undefined;
  /** A holder's credentials, newest first. */
  listByHolder(holder: string): AccessRecord[];
  /** Every credential (of one listing), newest first: the studio's test buyers. */
  listAll(listingId?: string): AccessRecord[];
  /** Inserts or replaces the credential of (listingId, holderWallet). */
  save(record: AccessRecord): void;
  delete(listingId: string, holder: string): void;
}

/** Signs for the wallets this studio holds (WalletService); throws NotFound for any other. */
export interface WalletSigner {
  secretKeyOf(address: string): Uint8Array;
}

/** A per-query debit, applied in the same transaction as the query's log row. */
export interface QueryCharge {
  credentialId: string;
  listingId: string;
  holder: string;
  lamports: number;
  /** False for a test grant's balance, which nobody paid. */
  earns: boolean;
}

/** What a wallet holds for a listing, as retrieval's access check needs it. */
export interface HeldAccess {
  credential: AccessRecord;
  status: CredentialStatus;
  priceLamports: number;
}

/** Test grants of per-query listings start with ten queries unless a balance is given. */
export const DEFAULT_TEST_QUERIES = 10;

/**
 * DESIGN §3: one_time is active until revoked; a subscription is active until `expiresAt`, then
 * expired; a per-query credential is low_balance once its balance cannot pay one query.
 */
export function credentialStatus(
  credential: Pick<AccessRecord, 'accessModel' | 'expiresAt' | 'balanceLamports'>,
  priceLamports: number,
  now: Date,
): CredentialStatus {
  switch (credential.accessModel) {
    case 'one_time':
      return 'active';
    case 'subscription':
      return credential.expiresAt !== null && Date.parse(credential.expiresAt) > now.getTime()
        ? 'active'
        : 'expired';
    case 'per_query':
      return credential.balanceLamports >= priceLamports ? 'active' : 'low_balance';
  }
}

export interface GrantOptions {
  /** Subscription only: the end of access, past or future. */
  expiresAt?: string;
  /** Per-query only: the balance in SOL. */
  balance?: number;
}

export interface PurchaseOptions {
  /** Subscription periods to buy (default 1). */
  periods?: number;
  /** Per-query deposit in SOL. */
  deposit?: number;
}

/**
 * Access credentials: their status, the caller's list and verification, and the studio's test buyers.
 * Every change goes through the ledger as a signed instruction.
 */
export class CredentialService {
  constructor(
    private readonly repo: CredentialRepository,
    private readonly listings: ListingService,
    private readonly ledger: Ledger,
    private readonly signer: WalletSigner,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** GET /v1/credentials: the holder's credentials of one status (`active` unless asked otherwise). */
  list(
    holder: string,
    query: Omit<CredentialListQuery, 'status'> & { status?: CredentialListQuery['status'] },
  ): Page<Credential> {
    const status = query.status ?? 'active';
    const now = this.now();
    const all = this.repo
      .listByHolder(holder)
      .map((record) => this.describe(record, now))
      .filter((c) => c.status === status);
    return {
      items: all.slice(query.offset, query.offset + query.limit),
      total: all.length,
      limit: query.limit,
      offset: query.offset,
    };
  }

  /** The studio's view: every local credential (of one listing), test grants marked. */
  listAll(listingId?: string): StudioCredential[] {
    if (listingId) this.listings.get(listingId, 'studio');
    const now = this.now();
    return this.repo
      .listAll(listingId)
      .map((record) => ({ ...this.describe(record, now), testGrant: record.testGrant }));
  }

  /** GET /v1/credentials/:listing_id. An unknown listing (or another wallet's draft) is 404. */
  async verify(listingId: string, holder: string): Promise<CredentialVerification> {
    const listing = this.listings.get(listingId, { wallet: holder });
    const { credential, onChainVerified } = await this.ledger.verifyAccess(listing.id, holder);
    if (!credential) return { listingId: listing.id, valid: false, status: 'not_found', onChainVerified };
    const status = credentialStatus(credential, solToLamports(listing.price), this.now());
    return {
      listingId: listing.id,
      valid: status === 'active',
      status,
      ...(credential.expiresAt ? { expiresAt: credential.expiresAt } : {}),
      ...(credential.pdaAddress ? { pdaAddress: credential.pdaAddress } : {}),
      onChainVerified,
    };
  }

  /** What `holder` holds for the listing, read straight from storage (retrieval's access check). */
  heldAccess(listing: Listing, holder: string): HeldAccess | undefined {
    const credential = this.repo.find(listing.id, holder);
    if (!credential) return undefined;
    const priceLamports = solToLamports(listing.price);
    return { credential, status: credentialStatus(credential, priceLamports, this.now()), priceLamports };
  }

  /**
   * A test buyer: `purchase_access` signed by the listing's creator for `holder`, free of charge, with
   * the terms set directly (a past `expiresAt` gives an expired subscription, a balance under one
   * query price a low_balance credential). Granting again replaces a test grant's terms.
   */
  async grant(listingId: string, holder: string, options: GrantOptions = {}): Promise<StudioCredential> {
    const listing = this.listings.get(listingId, 'studio');
    checkWallet(holder);
    refuseCreator(listing, holder, 'grant another wallet');
    const args: PurchaseAccessArgs = {
      ...this.termsOf(listing, holder, listing.creatorWallet),
      ...(options.expiresAt !== undefined ? { expiresAt: isoInstant(options.expiresAt, 'expiresAt') } : {}),
      ...(options.balance !== undefined ? { balanceLamports: lamportsOf(options.balance, 'balance') } : {}),
    };
    if (listing.accessModel === 'per_query' && args.balanceLamports === undefined) {
      args.balanceLamports = solToLamports(listing.price) * DEFAULT_TEST_QUERIES;
    }
    const signed = signInstruction(
      'purchase_access',
      args,
      listing.creatorWallet,
      this.signer.secretKeyOf(listing.creatorWallet),
    );
    const { credential } = await this.ledger.purchaseAccess(signed);
    return { ...this.describe(credential, this.now()), testGrant: true };
  }

  /**
   * Puts a test buyer in one credential state of the listing's access model: `active` (the default
   * terms), `expired` (a subscription that ended a day ago), `low_balance` (half a query price),
   * `zero_balance`, or `revoked` (granted, then revoked: the credential no longer exists). Returns the
   * credential, or null once revoked.
   */
  async grantState(
    listingId: string,
    holder: string,
    state: TestBuyerState,
  ): Promise<StudioCredential | null> {
    const listing = this.listings.get(listingId, 'studio');
    const allowed = testBuyerStatesFor(listing.accessModel);
    if (!allowed.includes(state)) {
      throw new InvalidInput(
        `state: '${state}' does not apply to a ${listing.accessModel} listing; use ${allowed.join(', ')}.`,
      );
    }
    const price = solToLamports(listing.price);
    switch (state) {
      case 'active':
        return this.grant(listing.id, holder);
      case 'expired':
        return this.grant(listing.id, holder, {
          expiresAt: new Date(this.now().getTime() - 86_400_000).toISOString(),
        });
      case 'low_balance':
        return this.grant(listing.id, holder, { balance: lamportsToSol(Math.floor(price / 2)) });
      case 'zero_balance':
        return this.grant(listing.id, holder, { balance: 0 });
      case 'revoked':
        if (!this.repo.find(listing.id, holder)) await this.grant(listing.id, holder);
        await this.revoke(listing.id, holder);
        return null;
    }
  }

  /** A real purchase by a wallet this studio holds: it signs and pays the listing's price. */
  async purchase(
    listingId: string,
    holder: string,
    options: PurchaseOptions = {},
  ): Promise<{ credential: StudioCredential; paid: number }> {
    const listing = this.listings.get(listingId, 'studio');
    checkWallet(holder);
    // It would pay the listing's price to itself, and a per-query deposit for queries it never pays for.
    refuseCreator(listing, holder, 'buy as another wallet');
    const args: PurchaseAccessArgs = {
      ...this.termsOf(listing, holder, holder),
      ...(options.periods !== undefined ? { periods: options.periods } : {}),
      ...(options.deposit !== undefined ? { depositLamports: lamportsOf(options.deposit, 'deposit') } : {}),
    };
    const signed = signInstruction('purchase_access', args, holder, this.signer.secretKeyOf(holder));
    const { credential, amountLamports } = await this.ledger.purchaseAccess(signed);
    return {
      credential: { ...this.describe(credential, this.now()), testGrant: false },
      paid: lamportsToSol(amountLamports),
    };
  }

  /**
   * Revokes `holder`'s credential: signed by the listing's creator when this studio holds that wallet,
   * else by the holder. The credential stops existing (verification reports not_found).
   */
  async revoke(
    listingId: string,
    holder: string,
  ): Promise<{ listingId: string; wallet: string; refunded: number }> {
    const listing = this.listings.get(listingId, 'studio');
    checkWallet(holder);
    const { signer, secretKey } = this.firstHeld([listing.creatorWallet, holder]);
    const signed = signInstruction(
      'revoke_access',
      { listingId: listing.id, holder, nonce: newNonce() },
      signer,
      secretKey,
    );
    const { refundedLamports } = await this.ledger.revokeAccess(signed);
    return { listingId: listing.id, wallet: holder, refunded: lamportsToSol(refundedLamports) };
  }

  private termsOf(listing: Listing, holder: string, payer: string): PurchaseAccessArgs {
    return {
      listingId: listing.id,
      holder,
      payer,
      accessModel: listing.accessModel,
      priceLamports: solToLamports(listing.price),
      nonce: newNonce(),
    };
  }

  private firstHeld(wallets: string[]): { signer: string; secretKey: Uint8Array } {
    for (const wallet of wallets) {
      try {
        return { signer: wallet, secretKey: this.signer.secretKeyOf(wallet) };
      } catch (err) {
        if (!(err instanceof NotFound)) throw err;
      }
    }
    throw new NotFound(
      `This studio holds neither the creator's wallet nor the holder's (${wallets.join(', ')}), so it cannot sign.`,
    );
  }

  private describe(record: AccessRecord, now: Date): Credential {
    const listing = this.listings.get(record.listingId, 'studio');
    return {
      listingId: record.listingId,
      listingTitle: listing.title,
      holderWallet: record.holderWallet,
      accessModel: record.accessModel,
      status: credentialStatus(record, solToLamports(listing.price), now),
      expiresAt: record.expiresAt,
      balance: record.accessModel === 'per_query' ? lamportsToSol(record.balanceLamports) : null,
      pdaAddress: record.pdaAddress,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
    };
  }
}

function checkWallet(wallet: string): void {
  if (!isWalletAddress(wallet)) throw new InvalidInput(`wallet: '${wallet}' is not a base58 wallet address.`);
}

/** A listing's creator needs no credential (DESIGN §3: it can always query its own listing). */
function refuseCreator(
  listing: { id: string; creatorWallet: string },
  holder: string,
  instead: string,
): void {
  if (holder === listing.creatorWallet) {
    throw new InvalidInput(
      `wallet: ${holder} created listing '${listing.id}' and can always query it; ${instead}.`,
    );
  }
}

/**
 * SOL to lamports for a balance or deposit, within what a listing's price may be: lamports stay exact
 * integers (1e300 SOL was a 500 when the instruction was signed, 1e7 SOL a false "not above 0 SOL").
 */
function lamportsOf(sol: number, field: string): number {
  if (!Number.isFinite(sol) || sol < 0)
    throw new InvalidInput(`${field}: expected an amount of SOL, 0 or more.`);
  if (sol > MAX_SOL_AMOUNT)
    throw new InvalidInput(`${field}: at most ${MAX_SOL_AMOUNT.toLocaleString('en-US')} SOL at a time.`);
  // 0.0000000001 SOL was stored as 0 lamports without a word, as prices are not.
  if (!isWholeLamports(sol)) throw new InvalidInput(`${field}: ${WHOLE_LAMPORTS_MESSAGE}`);
  return solToLamports(sol);
}
