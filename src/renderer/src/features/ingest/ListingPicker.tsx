import { Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { Listing } from '../../../../shared/listings';
import { LIST_LIMIT_MAX } from '../../../../shared/pagination';
import { leaveThen } from '../../lib/leaveGuard';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import type { Page, StudioApi } from '../../lib/studioApi';
import { listingSelectProps } from './listingOptions';
import { useListingChoice } from './useListingChoice';

/**
 * Every listing, read a page at a time until the server says there is no more: a picker that held
 * only the first page (100) left the oldest listings out, unchosen and unfound by their title. A
 * listing created while the pages are read may shift one into the next page: it is kept once.
 */
export async function readAllListings(list: StudioApi['listings']['list']): Promise<Page<Listing>> {
  const seen = new Set<string>();
  const data: Listing[] = [];
  for (let offset = 0; ;) {
    const page = await list({ limit: LIST_LIMIT_MAX, offset });
    for (const listing of page.data) {
      if (seen.has(listing.id)) continue;
      seen.add(listing.id);
      data.push(listing);
    }
    // An empty page ends it too, so a server that keeps saying `hasMore` cannot loop forever.
    if (!page.pagination.hasMore || page.data.length === 0) {
      return {
        data,
        pagination: { total: data.length, limit: data.length, offset: 0, hasMore: false },
      };
    }
    offset += page.data.length;
  }
}

/** The listings a picker offers: one query, shared with a page that reads them too (Evaluation). */
export function usePickerListings() {
  const api = useStudioApi();
  return useQuery({
    queryKey: [...queryKeys.listings, { picker: true }],
    queryFn: () => readAllListings(api.listings.list),
  });
}

/**
 * Chooses the listing whose knowledge base the page works on (the first one when none was chosen).
 * In a page's header it is named "Listing" without a visible label; `label` shows one, as beside
 * other labelled fields (Wallet's "Sign with").
 */
export function ListingPicker({ label }: { label?: string } = {}) {
  const [listingId, setListingId] = useListingChoice();
  const listings = usePickerListings();
  // Titles need not be unique: each option says its documents and id (and the field, when it must).
  const picker = listingSelectProps(listings.data?.data ?? [], listingId);
  const options = picker.data;
  const known = options.some((o) => o.value === listingId);

  useEffect(() => {
    if (listings.isSuccess && !known && options[0]) setListingId(options[0].value);
  }, [listings.isSuccess, known, options, setListingId]);

  return (
    <Select
      label={label}
      aria-label={label ? undefined : 'Listing'}
      placeholder={listings.isPending ? 'Loading listings…' : 'No listings yet'}
      {...picker}
      value={known ? listingId : null}
      // Another listing leaves the open view's unsaved changes (Pricing): asked first.
      onChange={(value) => value && leaveThen(() => setListingId(value))}
      allowDeselect={false}
      w={300}
      error={listings.isError ? 'Could not load the listings' : undefined}
    />
  );
}
