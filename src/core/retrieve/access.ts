import type { Listing } from '../../shared/listings';
import type { HeldAccess, QueryCharge } from '../marketplace/credentials';
import { CredentialExpired, CredentialNotFound, InsufficientBalance } from '../marketplace/errors';
import type { RetrievalViewer } from './viewer';

export { CredentialNotFound };

/** What a wallet holds for a listing (CredentialService.heldAccess), or undefined. */
export type AccessLookup = (listing: Listing, wallet: string) => HeldAccess | undefined;

/**
 * Who may query a listing (DESIGN §3): the studio itself and the listing's creator always; anyone else
 * needs an active credential, else 403 with the code of what is wrong. Returns the per-query charge,
 * which the query log write applies in its own transaction (the balance is checked again there).
 * Without a lookup nobody but the creator holds anything.
 */
export function authorizeRetrieval(
  listing: Listing,
  viewer: RetrievalViewer,
  lookup?: AccessLookup,
): QueryCharge | undefined {
  if (viewer === 'studio' || viewer.wallet === listing.creatorWallet) return undefined;
  const held = lookup?.(listing, viewer.wallet);
  if (!held) throw new CredentialNotFound(listing.id);
  const { credential } = held;
  if (held.status === 'expired') throw new CredentialExpired(listing.id, credential.expiresAt);
  if (held.status === 'low_balance') {
    throw new InsufficientBalance(listing.id, credential.balanceLamports, held.priceLamports);
  }
  if (credential.accessModel !== 'per_query') return undefined;
  return {
    credentialId: credential.id,
    listingId: listing.id,
    holder: viewer.wallet,
    lamports: held.priceLamports,
    earns: !credential.testGrant,
  };
}
