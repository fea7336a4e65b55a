import { Button, EmptyState } from '@mantine/core';
import { IconArrowRight, IconDatabase } from '@tabler/icons-react';
import { sectionHref } from '../lib/sections';

/** The words every page that works on a listing says while the studio holds none. */
export const NO_LISTING_TITLE = 'No listings yet';

/**
 * What a page that works on a listing shows while the studio holds none (a fresh data directory): the
 * same title everywhere (an h2 under the page's h1), what the page needs a listing for, and the way
 * to Listings to create one.
 */
export function NoListingState({ what }: { what: string }) {
  return (
    <EmptyState
      mt={48}
      icon={<IconDatabase size={28} />}
      withIndicatorBackground
      data-testid="no-listing-state"
    >
      <EmptyState.Title order={2}>{NO_LISTING_TITLE}</EmptyState.Title>
      <EmptyState.Description>{what} Create one on the Listings page first.</EmptyState.Description>
      <EmptyState.Actions>
        <Button component="a" href={sectionHref('listings')} rightSection={<IconArrowRight size={16} />}>
          Go to Listings
        </Button>
      </EmptyState.Actions>
    </EmptyState>
  );
}
