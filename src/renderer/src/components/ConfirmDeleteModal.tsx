import { Alert, Button, Group, Modal, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { errorMessage } from '../lib/studioApi';

/**
 * Asks before something is deleted for good: what goes, "Keep it" (focused first) or the red confirm
 * button, and the server's refusal when the deletion failed.
 */
export function ConfirmDeleteModal({
  opened,
  title,
  confirmLabel,
  pending,
  error,
  onConfirm,
  onClose,
  returnFocus = true,
  children,
}: {
  opened: boolean;
  title: string;
  confirmLabel: string;
  pending: boolean;
  /** The failed deletion's error, shown as "Not deleted". */
  error: unknown;
  onConfirm: () => void;
  onClose: () => void;
  /**
   * Whether closing puts the focus back on the button that opened the dialog: not once the deletion
   * is done, when the page moves it (that button may now act on another item).
   */
  returnFocus?: boolean;
  /** What is deleted, said in a sentence or two. */
  children: ReactNode;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title} centered returnFocus={returnFocus}>
      <Stack gap="md">
        <Text size="sm">{children}</Text>
        {error ? (
          <Alert color="red" variant="light" title="Not deleted" role="alert">
            {errorMessage(error)}
          </Alert>
        ) : null}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onClose} data-autofocus>
            Keep it
          </Button>
          <Button color="red" loading={pending} onClick={onConfirm}>
            {confirmLabel}
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
