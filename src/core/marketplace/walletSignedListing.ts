import type { PreparedListingTransaction, SubmittedListingTransaction } from '../../shared/studio';
import type { Ledger } from './ledger/ledger';
import {
  buildCreateListingTransaction,
  describeCreateListing,
  termsOfListing,
  verifyCreateListingTransaction,
} from './ledger/listingTransaction';
import type { ListingService } from './listings';

export interface WalletSignedListingDeps {
  listings: ListingService;
  ledger: Ledger;
}

/**
 * Publishing with a wallet adapter (the studio's or a browser wallet): the studio hands out the unsigned
 * create_listing transaction with everything the signature will cover, the wallet signs it, and the
 * signed bytes come back to be verified, recorded by the ledger (sent to the cluster when there is one)
 * and the listing published with its PDA. The server-side path (PublishingService.publish) stays for
 * the CLI.
 */
export async function prepareListingTransaction(
  deps: WalletSignedListingDeps,
  listingId: string,
  programId: string,
): Promise<PreparedListingTransaction> {
  const listing = deps.listings.get(listingId, 'studio');
  const terms = termsOfListing(listing);
  const tx = buildCreateListingTransaction(programId, terms, await deps.ledger.recentBlockhash());
  const bytes = tx.serialize({ requireAllSignatures: false, verifySignatures: false });
  return {
    transaction: Buffer.from(bytes).toString('base64'),
    summary: describeCreateListing(tx, terms, deps.ledger.kind),
  };
}

export async function submitListingTransaction(
  deps: WalletSignedListingDeps,
  listingId: string,
  programId: string,
  bytes: Uint8Array,
): Promise<SubmittedListingTransaction> {
  const listing = deps.listings.get(listingId, 'studio');
  const signed = verifyCreateListingTransaction(bytes, programId, termsOfListing(listing));
  const { pdaAddress, signature } = await deps.ledger.createListingTransaction(signed);
  return { listing: deps.listings.publish(listing.id, 'studio', pdaAddress), pdaAddress, signature };
}
