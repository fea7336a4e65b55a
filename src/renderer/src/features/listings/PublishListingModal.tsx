import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Listing } from '../../../../shared/listings';
import { ACCESS_MODEL_LABELS, formatListingPrice } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';

/** Confirms publishing a draft; `listing` undefined = closed. */
export function PublishListingModal({
  listing,
  onClose,
}: {
  listing: Listing | undefined;
  onClose: () => void;
}) {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const publish = useMutation({
    mutationFn: (id: string) => api.listings.publish(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.listings });
      close();
    },
  });

  function close() {
    publish.reset();
    onClose();
  }

  return (
    <Modal opened={listing !== undefined} onClose={close} title="Publish listing" centered>
      {listing && (
        <Stack gap="md">
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
          {listing.chunkCount === 0 && (
            <Alert color="yellow" variant="light">
              Its knowledge base is still empty: buyers would get no results until you ingest documents.
            </Alert>
          )}
          {publish.error && (
            <Alert color="red" variant="light" title="Not published" role="alert">
              {errorMessage(publish.error)}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button loading={publish.isPending} onClick={() => publish.mutate(listing.id)}>
              Publish
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
