import { Select } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { leaveThen } from '../../lib/leaveGuard';
import { queryKeys } from '../../lib/queryClient';
import { useStudioApi } from '../../lib/studioContext';
import { listingSelectProps } from './listingOptions';
import { useListingChoice } from './useListingChoice';

/** Chooses the listing whose knowledge base the page works on (the first one when none was chosen). */
export function ListingPicker() {
  const api = useStudioApi();
  const [listingId, setListingId] = useListingChoice();
  const listings = useQuery({
    queryKey: [...queryKeys.listings, { picker: true }],
    queryFn: () => api.listings.list({ limit: 100 }),
  });
  // Titles need not be unique: each option says its documents and id (and the field, when it must).
  const { data: options, renderOption } = listingSelectProps(listings.data?.data ?? []);
  const known = options.some((o) => o.value === listingId);
  const chosenTitle = known ? options.find((o) => o.value === listingId)?.label : undefined;

  useEffect(() => {
    if (listings.isSuccess && !known && options[0]) setListingId(options[0].value);
  }, [listings.isSuccess, known, options, setListingId]);

  return (
    <Select
      aria-label="Listing"
      placeholder={listings.isPending ? 'Loading listings…' : 'No listings yet'}
      data={options}
      renderOption={renderOption}
      value={known ? listingId : null}
      // Another listing leaves the open view's unsaved changes (Pricing): asked first.
      onChange={(value) => value && leaveThen(() => setListingId(value))}
      searchable
      allowDeselect={false}
      nothingFoundMessage="No such listing"
      w={300}
      // A long title is cut with an ellipsis in the field (shown whole on hover) and wraps in the list.
      title={chosenTitle}
      styles={{ input: { textOverflow: 'ellipsis' }, option: { overflowWrap: 'anywhere' } }}
      error={listings.isError ? 'Could not load the listings' : undefined}
    />
  );
}
