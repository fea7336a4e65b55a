import type { Listing } from '../../../../shared/listings';

type ListingRef = Pick<Listing, 'id' | 'chunkCount'>;

/**
 * The playground's own address, `#/playground?listing=lst_…[&as=<wallet>]`, as Test buyers links to it:
 * kept in step with the choices so that a reload finds them again.
 */
export function playgroundHash(listing: string, as: string | null): string {
  const params = new URLSearchParams({ listing });
  if (as) params.set('as', as);
  return `#/playground?${params.toString()}`;
}

/**
 * The listing the playground queries: the one the address names, else the one the creator works on
 * in the other views, else the first with chunks (or the first). A listing that no longer exists is
 * passed over.
 */
export function resolvePlaygroundListing(
  listings: readonly ListingRef[],
  wanted: { address: string | null; shared: string | null },
): string | null {
  const known = (id: string | null) => id !== null && listings.some((l) => l.id === id);
  if (known(wanted.address)) return wanted.address;
  if (known(wanted.shared)) return wanted.shared;
  return (listings.find((l) => l.chunkCount > 0) ?? listings[0])?.id ?? null;
}
