import { Text } from '@mantine/core';
import type { Listing } from '../../../../shared/listings';
import { ACCESS_MODEL_LABELS, formatListingPrice } from '../../lib/format';
import { useStudioApi } from '../../lib/studioContext';
import { EmptyKnowledgeBaseAlert } from './EmptyKnowledgeBaseAlert';
import { ListingActionModal } from './ListingActionModal';

/** Confirms publishing a draft; `listing` undefined = closed. */
export function PublishListingModal({
  listing,
  onClose,
}: {
  listing: Listing | undefined;
  onClose: () => void;
}) {
  const api = useStudioApi();
  return (
    <ListingActionModal
      listing={listing}
      onClose={onClose}
      action={{
        title: 'Publish listing',
        confirmLabel: 'Publish',
        failedTitle: 'Not published',
        run: (id) => api.listings.publish(id),
      }}
    >
      {(listing) => (
        <>
          <Text size="sm">
            Publish <b>{listing.title}</b>? Buyers can then find it and buy access on its current terms:{' '}
            <b>
              {ACCESS_MODEL_LABELS[listing.accessModel]}, {formatListingPrice(listing)}
            </b>
            .
          </Text>
          <Text size="xs" c="dimmed">
            The studio signs create_listing with the creator&apos;s wallet it holds. To review every field
            that is signed first, or to sign with a browser wallet, use the Wallet page.
          </Text>
          <EmptyKnowledgeBaseAlert listing={listing} />
        </>
      )}
    </ListingActionModal>
  );
}
