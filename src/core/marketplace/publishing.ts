import type { EarningsView, Withdrawal } from '../../shared/credentials';
import type { Listing } from '../../shared/listings';
import { lamportsToSol, solToLamports } from '../money';
import type { WalletSigner } from './credentials';
import type { Ledger } from './ledger/ledger';
import { newNonce, signInstruction } from './ledger/signing';
import type { ListingService } from './listings';

/**
 * The creator's side of the ledger: publishing a listing and withdrawing what it earned.
 *
 * Publishing and withdrawing first read where the listing stands (published? how much to pay out?) and
 * then act on it over the network. Two requests for one listing at once would both read the same state
 * and both send: the program refuses the later one (AccountAlreadyInUse, InsufficientEarnings) where it
 * should have been answered "already published" or "nothing to withdraw". So they run one at a time per
 * listing, within this process (the studio's server and each CLI command hold one service). A publish
 * raced from two processes is told apart by the ledger (ListingCreated.createdElsewhere) and answered
 * "already published" too.
 */
export class PublishingService {
  private readonly queue = new KeyedQueue();

  constructor(
    private readonly listings: ListingService,
    private readonly ledger: Ledger,
    private readonly signer: WalletSigner,
  ) {}

  /**
   * Signs `create_listing` with the creator's wallet, then publishes with the listing's PDA. Publishing
   * a listing the ledger in use already created is idempotent: nothing is signed, sent or recorded, and
   * the listing comes back as it is (`alreadyPublished`). A listing published on the embedded ledger is
   * put on chain when a Solana network is chosen and it is published again.
   */
  async publish(listingId: string): Promise<Listing> {
    return (await this.publishOnce(listingId)).listing;
  }

  /** `publish`, saying whether the listing was already published on the ledger in use. */
  async publishOnce(listingId: string): Promise<{ listing: Listing; alreadyPublished: boolean }> {
    const id = this.listings.get(listingId, 'studio').id;
    return this.queue.run(id, async () => {
      const listing = this.listings.get(id, 'studio');
      if (await this.ledger.published(listing.id)) return { listing, alreadyPublished: true };
      return this.signAndPublish(listing);
    });
  }

  private async signAndPublish(listing: Listing): Promise<{ listing: Listing; alreadyPublished: boolean }> {
    const creator = listing.creatorWallet;
    const signed = signInstruction(
      'create_listing',
      {
        listingId: listing.id,
        creator,
        accessModel: listing.accessModel,
        priceLamports: solToLamports(listing.price),
        subscriptionDays: listing.subscriptionDays,
        nonce: newNonce(),
      },
      creator,
      this.signer.secretKeyOf(creator),
    );
    const { pdaAddress, createdElsewhere } = await this.ledger.createListing(signed);
    // Created elsewhere: the other process flips it too; flipping it here as well changes nothing.
    const published = this.listings.publish(listing.id, 'studio', pdaAddress);
    return { listing: published, alreadyPublished: createdElsewhere === true };
  }

  async earnings(listingId: string): Promise<EarningsView> {
    const e = await this.ledger.earnings(listingId);
    return {
      listingId: e.listingId,
      earned: lamportsToSol(e.earnedLamports),
      withdrawn: lamportsToSol(e.withdrawnLamports),
      withdrawable: lamportsToSol(e.withdrawableLamports),
    };
  }

  /** Withdraws exactly what the listing can pay out; with nothing to pay, no instruction is sent. */
  async withdraw(listingId: string): Promise<Withdrawal> {
    const id = this.listings.get(listingId, 'studio').id;
    return this.queue.run(id, () => this.withdrawNow(id));
  }

  private async withdrawNow(listingId: string): Promise<Withdrawal> {
    const listing = this.listings.get(listingId, 'studio');
    const { withdrawableLamports } = await this.ledger.earnings(listing.id);
    if (withdrawableLamports === 0) return { listingId: listing.id, amount: 0, signature: null };
    const creator = listing.creatorWallet;
    const signed = signInstruction(
      'withdraw_earnings',
      { listingId: listing.id, creator, amountLamports: withdrawableLamports, nonce: newNonce() },
      creator,
      this.signer.secretKeyOf(creator),
    );
    const { amountLamports, signature } = await this.ledger.withdrawEarnings(signed);
    return { listingId: listing.id, amount: lamportsToSol(amountLamports), signature };
  }
}

/** Runs the tasks given for one key one after another, in the order given; other keys run freely. */
class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const result = (this.tails.get(key) ?? Promise.resolve()).then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
