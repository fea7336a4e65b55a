import { Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { leaveThen } from '../../lib/leaveGuard';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { listingSelectProps } from './listingOptions';
import { useListingChoice } from './useListingChoice';

/** The listings a picker offers: one query, shared with a page that reads them too (Evaluation). */
export function usePickerListings() {
  const api = useStudioApi();
  return useQuery({
    queryKey: [...queryKeys.listings, { picker: true }],
    queryFn: () => api.listings.list({ limit: 100 }),
  });
}

/** Chooses the listing whose knowledge base the page works on (the first one when none was chosen). */
export function ListingPicker() {
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
      aria-label="Listing"
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
