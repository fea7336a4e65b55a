import { Alert, Button, Group, Modal, Stack } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import type { Listing } from '../../../../shared/listings';
import { queryKeys } from '../../lib/queryClient';
import { errorMessage } from '../../lib/studioApi';

export interface ListingAction {
  title: string;
  confirmLabel: string;
  /** Title of the alert when the server refuses. */
  failedTitle: string;
  color?: string;
  run: (id: string) => Promise<unknown>;
}

/**
 * Confirms one action on a listing (publish, delete): the explanation, the server's refusal if any,
 * Cancel and the action; the listings are reloaded once it succeeds. `listing` undefined = closed.
 */
export function ListingActionModal({
  listing,
  onClose,
  action,
  onDone,
  children,
}: {
  listing: Listing | undefined;
  onClose: () => void;
  action: ListingAction;
  /**
   * Called once the action succeeded and the dialog closed: the page then puts the focus where the
   * result is (the button that opened the dialog may be gone with its row), so it is not put back.
   */
  onDone?: (listing: Listing) => void;
  children: (listing: Listing) => ReactNode;
}) {
  const queryClient = useQueryClient();
  const [returnFocus, setReturnFocus] = useState(true);
  const [openedFor, setOpenedFor] = useState(listing);
  if (listing !== openedFor) {
    setOpenedFor(listing);
    if (listing) setReturnFocus(true);
  }
  const mutation = useMutation({
    mutationFn: action.run,
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: queryKeys.listings });
      if (onDone && listing) {
        setReturnFocus(false);
        close();
        onDone(listing);
        return;
      }
      close();
    },
  });

  function close() {
    mutation.reset();
    onClose();
  }

  return (
    <Modal
      opened={listing !== undefined}
      onClose={close}
      title={action.title}
      centered
      returnFocus={returnFocus}
    >
      {listing && (
        <Stack gap="md">
          {children(listing)}
          {mutation.error && (
            <Alert color="red" variant="light" title={action.failedTitle} role="alert">
              {errorMessage(mutation.error)}
            </Alert>
          )}
          <Group justify="flex-end" gap="sm">
            {/* The first focus: not the header's ×, and not the action, which a stray Enter would run. */}
            <Button variant="default" onClick={close} data-autofocus>
              Cancel
            </Button>
            <Button
              color={action.color}
              loading={mutation.isPending}
              onClick={() => mutation.mutate(listing.id)}
            >
              {action.confirmLabel}
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  );
}
