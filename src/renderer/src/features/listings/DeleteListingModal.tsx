import { Text } from '@mantine/core';
import type { Listing } from '../../../../shared/listings';
import { formatCount } from '../../lib/format';
import { useStudioApi } from '../../lib/studioContext';
import { ListingActionModal } from './ListingActionModal';

/** Confirms deleting a draft with its knowledge base; `listing` undefined = closed. */
export function DeleteListingModal({
  listing,
  onClose,
  onDeleted,
}: {
  listing: Listing | undefined;
  onClose: () => void;
  /** Once it is deleted and the dialog closed (the page moves the focus: its row is gone). */
  onDeleted?: (listing: Listing) => void;
}) {
  const api = useStudioApi();
  return (
    <ListingActionModal
      listing={listing}
      onClose={onClose}
      onDone={onDeleted}
      action={{
        title: 'Delete listing',
        confirmLabel: 'Delete listing',
        failedTitle: 'Not deleted',
        color: 'red',
        run: (id) => api.listings.delete(id),
      }}
    >
      {(listing) => (
        <Text size="sm">
          Delete <b>{listing.title}</b>? Its knowledge base goes with it:{' '}
          <b>
            {formatCount(listing.documentCount)} {listing.documentCount === 1 ? 'document' : 'documents'}
          </b>{' '}
          and{' '}
          <b>
            {formatCount(listing.chunkCount)} {listing.chunkCount === 1 ? 'chunk' : 'chunks'}
          </b>
          , with their vectors and upload history. This cannot be undone.
        </Text>
      )}
    </ListingActionModal>
  );
}
