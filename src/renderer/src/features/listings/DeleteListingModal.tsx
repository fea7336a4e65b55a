import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Listing } from '../../../../shared/listings';
import { formatCount } from '../../lib/format';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';
import { useStudioApi } from '../../lib/studioContext';

/** Confirms deleting a draft with its knowledge base; `listing` undefined = closed. */
export function DeleteListingModal({
  listing,
  onClose,
}: {
  listing: Listing | undefined;
  onClose: () => void;
}) {
  const api = useStudioApi();
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: (id: string) => api.listings.delete(id),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.listings });
      close();
    },
  });

  function close() {
    remove.reset();
    onClose();
  }

  return (
    <Modal opened={listing !== undefined} onClose={close} title="Delete listing" centered>
      {listing && (
        <Stack gap="md">
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
          {remove.error && (
            <Alert color="red" variant="light" title="Not deleted" role="alert">
              {errorMessage(remove.error)}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate(listing.id)}>
              Delete listing
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
